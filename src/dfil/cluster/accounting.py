"""The profile's SLURM account and QOS against the user's associations (pure), read from::

    sacctmgr -n -P show assoc user=<user> format=account,qos
                                one line per association of the user: its account, "|",
                                the QOS it may use, comma-separated ("" where none is
                                listed)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dfil.cluster.checks import PROFILE_FIX, Check


def parse_qos(text: str) -> dict[str, set[str]]:
    """Each account of ``sacctmgr -n -P show assoc user=<user> format=account,qos`` and
    the QOS its associations list (lowercased, as SLURM compares them)."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.strip():
            account, _, qos = line.strip().lower().partition("|")
            out.setdefault(account, set()).update(q for q in qos.split(",") if q)
    return out


def judge_account(account: str | None, accounts: set[str], user: str) -> Check:
    """The profile's account is one of ``user``'s associations."""
    if account is None:
        return Check("slurm", "problem", f"no slurm_account is set: set it in {PROFILE_FIX}")
    if not accounts:
        return Check("slurm", "skipped", f"sacctmgr lists no association for {user} (no "
                     f"accounting here): account {account} not checked")
    if account.lower() in accounts:
        return Check("slurm", "ok", f"account {account} is one of {user}'s")
    return Check("slurm", "problem", f"account {account!r} is not one of {user}'s "
                 f"({', '.join(sorted(accounts))}): set slurm_account in {PROFILE_FIX}")


def judge_qos(profile_accounts: Iterable[str], qos: Mapping[str, str],
              assoc: Mapping[str, set[str]], user: str) -> list[Check]:
    """One check per QOS the profile sets (``qos``: each setting's key and the QOS it
    names): one that the profile's accounts may use (``assoc``: :func:`parse_qos`)."""
    accounts = sorted({a.lower() for a in profile_accounts} & set(assoc))
    allowed = set().union(*(assoc[a] for a in accounts)) if accounts else set()
    where = " or ".join(accounts) or "the profile's account"
    keys: dict[str, list[str]] = {}
    for key, name in sorted(qos.items()):
        keys.setdefault(name, []).append(key)
    out = []
    for name, set_by in sorted(keys.items()):
        label = f"qos {name} ({', '.join(set_by)})"
        if not allowed:
            out.append(Check("slurm", "skipped", f"{label}: sacctmgr lists no QOS for {user} "
                             f"under {where}: not checked"))
        elif name.lower() in allowed:
            out.append(Check("slurm", "ok", f"{label} is one {where} may use"))
        else:
            out.append(Check("slurm", "problem", f"{label} is not one {where} may use "
                             f"({', '.join(sorted(allowed))}): set qos in {PROFILE_FIX}; "
                             "`sacctmgr show assoc user=$USER format=account,qos` lists them"))
    return out
