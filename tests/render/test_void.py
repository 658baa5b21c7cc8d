"""dfil.render.void: DFIL main against fine-tune on frozen features is void."""

from __future__ import annotations

from types import SimpleNamespace

from dfil.render.void import frozen_keys, same_model, void_note

DFIL = ("frog/b/dfil/lam0.5/nfull/qure/seed1", "test.main.acc")
FT = ("frog/b/finetune/lamna/nfull/na/seed1", "test.main.acc")
MF = ("frog/b/dfil/lam0.5/nfull/qure/seed1", "test.mf.acc")


def test_frozen_cells_come_from_the_resolved_cell_configs():
    cells = {"a": SimpleNamespace(config={"model": {"adapter": "none"}}),
             "b": SimpleNamespace(config={"model": {"adapter": "lora"}})}
    assert frozen_keys(cells) == frozenset({"a"})


def test_only_the_two_main_classifiers_on_frozen_cells_are_the_same_model():
    frozen = frozenset({DFIL[0], FT[0]})
    assert same_model([DFIL, FT], frozen)
    assert not same_model([MF, FT], frozen)            # the MF path is another model
    assert not same_model([DFIL, FT], frozenset({FT[0]}))  # DFIL trained an adapter
    assert not same_model([DFIL], frozen)              # one side only
    few = [("frog/b/dfil+fewshot/lam0.5/n16/qure/seed1", "test.main.acc"),
           ("frog/b/finetune+fewshot/lamna/n16/na/seed1", "test.main.acc")]
    assert same_model(few, frozenset(k for k, _ in few))  # a variant's cells too


def test_the_table_note_says_it_once_and_only_when_both_sit_in_the_table():
    frozen = frozenset({DFIL[0], FT[0]})
    assert void_note([DFIL, FT, MF], frozen).startswith("DFIL (main) vs fine-tune: the "
                                                        "backbone is frozen")
    assert void_note([DFIL, MF], frozen) == ""
