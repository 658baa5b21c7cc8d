"""The acceptance run's records as the cost model's measurements (pure): a measured
``cell`` record on a GPU the model knows is the project's trainer's (``dfil``) throughput
at its batch on that site, in place of the recorded figure at that batch, labelled
"measured by the acceptance run on <device>, <date>"; every record gets one line saying
what it measured and what the projection made of it.

The records are those of :mod:`dfil.contracts.acceptance`, read by the caller. A ``qlora``
record (4-bit weights) is a source beside them, not a projection's: its step costs what
dequantisation adds, which the FLOPs rule does not count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dfil.cost.rates import PEAK_BF16, Throughput

#: What measured the acceptance records' throughputs.
BY = "the acceptance run"
#: The trainer an acceptance record times (:data:`dfil.cost.rates.TRAINERS`).
TRAINER = "dfil"


def _speed(record: Mapping) -> str:
    peak = record.get("peak_gpu_gib")
    memory = (f"peak {peak:.1f} GiB GPU memory" if peak is not None
              else f"peak {record.get('peak_rss_gib', 0):.1f} GiB RSS")
    return (f"{record['tokens_per_s']:,.0f} tokens/s, {record['steps_per_s']:.2f} steps/s, "
            f"{memory}")


def throughput(record: Mapping) -> Throughput:
    """A measured record as the project's trainer's :class:`Throughput`."""
    quantized = ", 4-bit" if record["quantized"] else ""
    return Throughput(
        f"the project's training step ({record['kind']} {record['backbone']}{quantized}, batch "
        f"{record['batch']})", float(record["tokens_per_s"]), int(record["batch"]),
        record["gpu"], dict(record["arch"]), float(record["prompt_tokens"]),
        f"{record['steps']} timed steps, {record['layout']} batches, {_speed(record)}, "
        f"trainer commit {record['trainer_commit'][:12]}", record["date"], record["device"],
        BY)


def projects(record: Mapping) -> bool:
    """Whether a record gives the projection's trainer speed: a measured ``cell`` record
    on a GPU whose peak the model knows, with its architecture."""
    return (record["kind"] == "cell" and record["status"] == "measured"
            and record.get("gpu") in PEAK_BF16 and bool(record.get("arch")))


def acceptance_table(records: Iterable[Mapping]) -> dict[tuple[str, int], Throughput]:
    """The project's trainer's measurements the records give, by (trainer, batch)."""
    return {(TRAINER, int(r["batch"])): throughput(r) for r in records if projects(r)}


def acceptance_lines(records: Iterable[Mapping]) -> list[str]:
    """One line per record: kind, backbone, what it measured (or why nothing), where,
    when, and whether the projection uses it."""
    lines = []
    for r in records:
        head = f"acceptance {r['kind']} {r['backbone']}"
        if r["status"] != "measured":
            lines.append(f"{head}: skipped: {r['reason']} (on {r['device']}, {r['date']})")
            continue
        if projects(r):
            use = f"the {TRAINER} trainer's projection at batch {r['batch']}"
        elif r["kind"] == "qlora":
            use = "a source, not projected (4-bit)"
        else:
            use = (f"not projected: GPU-hours need a GPU the cost model knows "
                   f"({', '.join(sorted(PEAK_BF16))})")
        lines.append(f"{head}: {_speed(r)}; measured by {BY} on {r['device']}, {r['date']} "
                     f"(trainer commit {r['trainer_commit'][:12]}): {use}")
    return lines
