"""Running on a SLURM site (pure Python: no torch): what Snakemake and SLURM leave and
tell a job, and what the site's profile and partitions are checked against before the
real run.

Three things are easily all called a "lock"; here each has its own name:

- Snakemake's *directory lock* (``.snakemake/locks/``), left by a killed run, with its
  incomplete files and the jobs a killed local Snakemake leaves running
  (:mod:`.dirlock`);
- a run directory's *writer*: the one ``dfil train`` or ``dfil evaluate`` writing it, and
  the holder record (pid, host, command, SLURM job) a second writer is refused with
  (:mod:`.writer`);
- a grid's *pins*: the commit each hub revision resolves to, in the grid's lock file
  (:mod:`dfil.config.pins`, outside this package: it is part of the grid).

SLURM's durations (:mod:`.durations`); whether a SIGTERM is the job's time limit
(:mod:`.timelimit`); ``dfil grid preflight``'s check lines (:mod:`.checks`), the nodes
``sinfo`` lists (:mod:`.nodes`), each size class's job against the partitions' limits
(:mod:`.limits`), which partition, account and QOS each rule's jobs carry
(:mod:`.rules`), the limits the site enforces (:mod:`.policy`) and each rule's job against
them (:mod:`.fit`), and the profile's site against all of them (:mod:`.slurm`); the
``sbatch`` a SLURM run submits with, waiting out a queue limit (:mod:`.submit`); the
partition a training or evaluation job goes to (:mod:`.partitions`).
"""
