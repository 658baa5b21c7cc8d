"""A run's predictions on any texts: a trained dual-path model, or option scoring.

:class:`Scorer` loads what the run needs once (the best checkpoint, or the causal LM for
zero-shot option scoring) and turns a frame of texts into :class:`Predictions`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dfil.config.cell import CellConfig
from dfil.core.inference import softmax
from dfil.core.methods import method_spec
from dfil.core.quantifiers import FROG_CLASSES
from dfil.engine.checkpoint import load_trained
from dfil.engine.device import autocast, autocast_dtype
from dfil.engine.features import Columns, LazyTokenizer, cell_prompts, encode_frame
from dfil.engine.predict import Predictions, heads_centers, heads_widths, predict
from dfil.engine.truncation import truncation
from dfil.model.backbone import load_backbone
from dfil.model.dual_path import count_trainable
from dfil.model.zero_shot import option_logprobs


class Scorer:
    """Predictions for any list of texts, from a dual-path model or by option scoring.

    ``centers``/``widths`` (numpy ``[Q]``) and ``trainable`` (parameter count) are None
    where the method has none. ``truncation`` holds, per set scored under a ``name``, how
    many of its prompts were cut to ``max_length`` (:mod:`dfil.engine.truncation`; option
    scoring records none).
    """

    def __init__(self, cell: CellConfig, run_dir: Path, device):
        self.cell, self.device = cell, device
        self.spec = method_spec(cell.model.method)
        self.tokenizer = LazyTokenizer(cell.model.backbone)
        self.dtype = autocast_dtype(cell.train.precision, device)
        self.truncation: dict[str, dict] = {}
        if self.spec.trains:
            _, self.model = load_trained(run_dir, device)
            self.centers = heads_centers(self.model.heads)
            self.widths = heads_widths(self.model.heads)
            self.trainable = count_trainable(self.model)
        else:
            self.model = load_backbone(cell.model.backbone, causal_lm=True).to(device).eval()
            self.centers = self.widths = self.trainable = None

    def __call__(self, frame: pd.DataFrame, text_col: str = "text", task: str | None = None,
                 label_col: str | None = None, p_col: str | None = None,
                 name: str | None = None) -> Predictions:
        if not self.spec.trains:
            prompts = cell_prompts(self.cell, frame[text_col], task)
            with autocast(self.device, self.dtype):
                scores = option_logprobs(self.model, self.tokenizer(), prompts, FROG_CLASSES,
                                         self.cell.train.eval_batch_size)
            return Predictions(main_probs=softmax(scores), p=None, mf_scores=None)
        enc = encode_frame(self.model, self.tokenizer, self.cell, frame,
                           Columns(text_col, label_col, p_col, task))
        if name is not None:
            self.truncation[name] = truncation(enc, self.cell.data.max_length)
        pad_id = None if enc.features is not None else self.tokenizer.pad_id
        return predict(self.model, enc, pad_id, self.cell.train.eval_batch_size, self.dtype)
