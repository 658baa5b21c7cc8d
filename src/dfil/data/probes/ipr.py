"""IPR, Implicit Proportion Reasoning (App. F.6, Table ipr_full): 40 sentences.

Proportions are implied, never stated as numbers: 12 linguistic, 12 approximate,
8 comparative and 8 emphatic phrasings. The paper prints one sentence per category; the
rest are ours (note R-ipr). Gold = nearest QuRe center of the implied proportion.
"""

from __future__ import annotations

import numpy as np

from dfil.data.probes.common import label_fields

#: (category, phrase, implied proportion). The first of each category is the paper's.
PHRASES = (
    ("linguistic", "The vast majority of", 0.85),
    ("linguistic", "A clear majority of", 0.65),
    ("linguistic", "A small minority of", 0.10),
    ("linguistic", "A sizeable minority of", 0.35),
    ("linguistic", "Roughly half of", 0.50),
    ("linguistic", "Only a handful of", 0.04),
    ("linguistic", "Almost everyone among", 0.97),
    ("linguistic", "Hardly any of", 0.02),
    ("linguistic", "A significant share of", 0.40),
    ("linguistic", "A narrow majority of", 0.55),
    ("linguistic", "A modest fraction of", 0.20),
    ("linguistic", "Well over half of", 0.70),
    ("approximate", "Approximately one in five of", 0.20),
    ("approximate", "Roughly one in three of", 1 / 3),
    ("approximate", "About two in three of", 2 / 3),
    ("approximate", "Nearly nine in ten of", 0.90),
    ("approximate", "Around one in ten of", 0.10),
    ("approximate", "About three in four of", 0.75),
    ("approximate", "Close to one in four of", 0.25),
    ("approximate", "About four in five of", 0.80),
    ("approximate", "Roughly one in twenty of", 0.05),
    ("approximate", "About two in five of", 0.40),
    ("approximate", "Approximately three in five of", 0.60),
    ("approximate", "Nearly one in two of", 0.50),
    ("comparative", "three times as many supporters as opponents", 0.75),
    ("comparative", "twice as many supporters as opponents", 2 / 3),
    ("comparative", "as many supporters as opponents", 0.50),
    ("comparative", "four times as many supporters as opponents", 0.80),
    ("comparative", "half as many supporters as opponents", 1 / 3),
    ("comparative", "nine times as many supporters as opponents", 0.90),
    ("comparative", "a third as many supporters as opponents", 0.25),
    ("comparative", "a quarter as many supporters as opponents", 0.20),
    ("emphatic", "An overwhelming majority of", 0.92),
    ("emphatic", "Virtually every one of", 0.98),
    ("emphatic", "Every single one of", 1.00),
    ("emphatic", "Not a single one of", 0.00),
    ("emphatic", "A vanishingly small fraction of", 0.02),
    ("emphatic", "Almost none of", 0.03),
    ("emphatic", "A resounding majority of", 0.88),
    ("emphatic", "Practically all of", 0.96),
)
CATEGORY_SIZES = {"linguistic": 12, "approximate": 12, "comparative": 8, "emphatic": 8}
_SUBJECTS = (
    ("the voters", "supported the measure"),
    ("the participants", "experienced the side effect"),
    ("the delegates", "endorsed the resolution"),
    ("the residents", "backed the new park"),
    ("the members", "approved the budget"),
)


def ipr_records(seed: int) -> list[dict]:
    """The 40 IPR sentences, each on a seeded subject, with QuRe gold labels."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, (category, phrase, p) in enumerate(PHRASES):
        group, pred = _SUBJECTS[int(rng.integers(len(_SUBJECTS)))]
        if category == "comparative":
            noun = group.removeprefix("the ")
            text = (f"Among {group}, there were {phrase} of the measure, "
                    f"so [MASK] of the {noun} supported it.")
        else:
            text = f"{phrase} {group} {pred}, so [MASK] of them did."
        rows.append({"id": f"ipr-{category}-{i:02d}", "category": category, "phrase": phrase,
                     "p": p, **label_fields("", p), "text": text})
    return rows
