"""StopFlag: SIGTERM (a preemption, or the slurm profile's --signal=TERM@300 ahead of the
time limit) raises the flag training checks between steps; no other signal is taken over
(the profile sends no SIGUSR1, which would kill the Snakemake process wrapping the job)."""

import os
import signal

from dfil.train.resume import StopFlag


def test_sigterm_raises_the_flag_and_the_handlers_are_put_back():
    before = signal.getsignal(signal.SIGTERM)
    with StopFlag() as stop:
        assert stop.raised is None
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.raised == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigusr1_is_left_alone():
    before = signal.getsignal(signal.SIGUSR1)
    with StopFlag() as stop:
        assert signal.getsignal(signal.SIGUSR1) is before
        assert not hasattr(stop, "warned")
    assert StopFlag.signals == (signal.SIGTERM,)
