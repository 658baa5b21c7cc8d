"""Datasets and probe sets: FRoG, QuRe, SST-5, STS22, synthetic stand-ins, the paper's probes.

Real loaders accept a hub id (cluster) or a local path (everywhere else); the embedded
default uses the seeded synthetic generators, which never touch the network.
"""

from dfil.data.frog import (
    FROG_HUB_ID,
    PROMPT_TEMPLATE,
    few_shot_subset,
    format_prompt,
    load_frog,
    parse_percentage,
    split_train_val,
)
from dfil.data.ordinal import load_sst5, load_sts22
from dfil.data.probes import PROBE_SETS, ProbeConfig, generate_probes, write_probes
from dfil.data.qure import load_qure
from dfil.data.synthetic import ordinal_standin_records, write_frog_like

__all__ = [
    "FROG_HUB_ID",
    "PROBE_SETS",
    "PROMPT_TEMPLATE",
    "ProbeConfig",
    "few_shot_subset",
    "format_prompt",
    "generate_probes",
    "load_frog",
    "load_qure",
    "load_sst5",
    "load_sts22",
    "ordinal_standin_records",
    "parse_percentage",
    "split_train_val",
    "write_frog_like",
    "write_probes",
]
