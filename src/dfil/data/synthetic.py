"""Seeded synthetic data for the embedded default (no network): FRoG-format and 5-level
ordinal stand-ins.

The FRoG-format generator writes the Hugging Face record layout of ``GAIR/FRoG`` with the
same 8 classes, the class balance and proportion ranges of Table dataset_stats, an easy form
that states "k out of N" and a hard form over group sizes the easy split never uses (or,
optionally, one that only gives the complement count). It is a stand-in for FRoG, named so
in every output built from it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dfil.contracts.digests import write_dir_stamp
from dfil.core.quantifiers import FROG_CLASSES
from dfil.data.frog import largest_remainder
from dfil.data.io import write_jsonl
from dfil.data.probes.common import draw_fraction

#: Table dataset_stats: easy-split class counts (train + val) = hard-split counts.
FROG_CLASS_COUNTS = (31, 106, 518, 402, 202, 486, 199, 100)
#: Table dataset_stats: proportion range of each class.
FROG_P_RANGES = (
    (0.0, 0.0), (0.01, 0.10), (0.05, 0.30), (0.10, 0.35),
    (0.25, 0.50), (0.35, 0.65), (0.60, 0.90), (1.0, 1.0),
)
#: FRoG's quantifier strengths (its quant_reason records); gap = strength - p.
FROG_STRENGTHS = (0.004, 0.024, 0.074, 0.183, 0.225, 0.369, 0.687, 0.885)

_TOTALS = (20, 25, 40, 50, 60, 80, 100, 120, 150, 200, 250, 400, 500, 1000)
#: Group sizes of the ``unseen_totals`` hard split: none is an easy split's total.
HARD_TOTALS = (30, 45, 75, 90, 160, 240, 300, 360, 450, 600, 800)
#: How the stand-in's hard items differ from the easy ones (note R-synthetic).
HARD_FORMS = ("unseen_totals", "complement")
#: (group noun, predicate, negated predicate)
_SCENES = (
    ("students", "passed the exam", "did not pass the exam"),
    ("employees", "joined the pension plan", "stayed out of the pension plan"),
    ("patients", "reported side effects", "reported no side effects"),
    ("voters", "supported the proposal", "opposed the proposal"),
    ("households", "owned a car", "did not own a car"),
    ("seedlings", "survived the frost", "died in the frost"),
    ("shipments", "arrived on time", "arrived late"),
    ("members", "attended the meeting", "missed the meeting"),
    ("trials", "ended in success", "ended in failure"),
    ("applicants", "were accepted", "were turned down"),
)
_SUFFIX = ("\n\nPlease select the quantifier that is closest to the meaning of [MASK] "
           "from the following choices.")


def _mention(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}".rstrip("0").rstrip(".") + " %"


def frog_like_records(n: int, form: str, seed: int, prefix: str,
                      hard_form: str = "unseen_totals") -> list[dict]:
    """``n`` FRoG-layout records; ``form`` "easy" states "k out of N".

    ``form`` "hard" is, by ``hard_form``: ``"unseen_totals"``, the easy wording over group
    sizes N that no easy item uses (:data:`HARD_TOTALS`), so a model must read the
    proportion rather than recall count pairs it was trained on; or ``"complement"``,
    which gives only the complement count ("Of the N x, N-k did not ...; [MASK] of them
    ...") and is out of reach of a frozen 135M backbone's features (note R-synthetic).
    """
    if form not in ("easy", "hard"):
        raise ValueError(f"unknown form {form!r}; expected 'easy' or 'hard'")
    if hard_form not in HARD_FORMS:
        raise ValueError(f"unknown hard_form {hard_form!r}; expected one of {HARD_FORMS}")
    complement = form == "hard" and hard_form == "complement"
    totals = HARD_TOTALS if form == "hard" and hard_form == "unseen_totals" else _TOTALS
    counts = largest_remainder(dict(enumerate(FROG_CLASS_COUNTS)), n,
                               min_each=1 if n >= len(FROG_CLASSES) else 0)
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(len(FROG_CLASSES)), list(counts.values())))
    records = []
    for i, label in enumerate(labels.tolist()):
        lo, hi = FROG_P_RANGES[label]
        k, total = draw_fraction(rng, lo, hi, totals)
        group, pred, neg = _SCENES[int(rng.integers(len(_SCENES)))]
        if not complement:
            sentence = f"[MASK] of the {total} {group} {pred}, specifically {k} out of {total}."
            original = f"{k} of the {total} {group} {pred}."
        else:
            sentence = f"Of the {total} {group}, {total - k} {neg}. [MASK] of them {pred}."
            original = f"Of the {total} {group}, {total - k} {neg}. {k} of them {pred}."
        p = k / total
        records.append({
            "id": f"{prefix}-{form}-{i:05d}",
            "question": sentence + _SUFFIX,
            "target_percentage_mention": _mention(k, total),
            "quantifier": FROG_CLASSES[label],
            "quantifier_strength_gap": round(FROG_STRENGTHS[label] - p, 3),
            "answer": "ABCDEFGH"[label],
            "origin_question": original,
            "raw_question": sentence,
            "source": "dfil-synthetic-frog (stand-in, not FRoG)",
        })
    return records


def write_frog_like(out_dir: str | Path, seed: int = 0, n_easy: int = 2044,
                    n_hard: int = 2044, hard_form: str = "unseen_totals") -> dict[str, str]:
    """Write ``easy.jsonl`` and ``hard.jsonl`` (hub layout) to ``out_dir`` and, last, their
    sha256 stamp (:mod:`dfil.contracts.digests`); returns the sha256s by form.

    Defaults give Table dataset_stats's sizes: easy 2,044 (-> 1,636 train / 408 val), hard
    2,044. The same seed gives byte-identical files. ``hard_form``: see
    :func:`frog_like_records`.
    """
    out = Path(out_dir)
    sha = {
        form: write_jsonl(out / f"{form}.jsonl",
                          frog_like_records(n, form, seed * 2 + j, "synth", hard_form))
        for j, (form, n) in enumerate((("easy", n_easy), ("hard", n_hard)))
    }
    write_dir_stamp(out, f"dfil synth-frog --seed {seed} --n-easy {n_easy} --n-hard {n_hard} "
                    f"--hard-form {hard_form}", {f"{k}.jsonl": v for k, v in sha.items()})
    return sha


#: 5-level stand-in for SST-5 / STS22 (very negative .. very positive).
_ORDINAL_PHRASES = (
    ("a complete disaster", "painful to sit through", "utterly worthless"),
    ("disappointing", "weaker than expected", "mostly dull"),
    ("passable", "neither good nor bad", "an average effort"),
    ("enjoyable", "quite good", "well made"),
    ("a masterpiece", "absolutely wonderful", "one of the best of the year"),
)
_ORDINAL_SUBJECTS = ("The film", "The novel", "The album", "The play", "The series", "The game")


#: Share of stand-in reviews worded one level off their rating (note R-ordinal-standin).
ORDINAL_OFF_LEVEL = 0.2
#: The ordinal stand-in task's records: its pool (train and validation) and test split.
ORDINAL_STANDIN_POOL, ORDINAL_STANDIN_TEST = 1000, 500


def ordinal_standin_records(n: int, seed: int, prefix: str = "ordinal-standin",
                            off_level: float = ORDINAL_OFF_LEVEL) -> list[dict]:
    """``n`` records ``{id, text, label, wording_level, source}`` of a synthetic 5-level
    ordinal task (balanced labels).

    A review is worded at its rating's level, except that a share ``off_level`` of them
    is worded one level higher or lower (clipped to the scale), as raters and wording
    disagree in SST-5: a model reading the text cannot exceed about ``1 - off_level``
    accuracy, so the stand-in's tables are neither at chance nor at ceiling.
    """
    if not 0.0 <= off_level <= 1.0:
        raise ValueError(f"off_level must be in [0, 1], got {off_level}")
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 5)
    rows = []
    for i, label in enumerate(labels.tolist()):
        subject = _ORDINAL_SUBJECTS[int(rng.integers(len(_ORDINAL_SUBJECTS)))]
        shift = int(rng.choice((-1, 1))) if rng.random() < off_level else 0
        level = min(max(label + shift, 0), len(_ORDINAL_PHRASES) - 1)
        phrase = _ORDINAL_PHRASES[level][int(rng.integers(3))]
        rows.append({"id": f"{prefix}-{i:05d}", "text": f"{subject} was {phrase}.",
                     "label": label, "wording_level": level,
                     "source": "dfil-synthetic-ordinal (stand-in)"})
    return rows
