# A SLURM run submits through the workflow's sbatch (workflow/sbatch/sbatch,
# dfil.cluster.submit): the executor plugin runs the first `sbatch` on this process's
# PATH. A submission the site refuses for a queue limit (its MaxSubmitJobs, the QOS's per
# user) is waited on and sent again, never counted as the job's failure; one refused for
# anything else is passed on to Snakemake, and a training or evaluation job's refusal is
# kept in its run directory with sbatch's words (`dfil grid status` shows them).
import shutil

from dfil.cluster.submit import route_through

#: workflow/sbatch, beside this file's directory.
SBATCH_DIR = Path(workflow.current_basedir).parent / "sbatch"


def submit_through_workflow_sbatch():
    """Put workflow/sbatch first on PATH for a SLURM run (onstart: the executor is known
    from then on), with what its sbatch needs: the grid's results, this interpreter, the
    wait before a queue-limited submission is sent again."""
    if workflow.is_main_process and not workflow.local_exec and shutil.which("sbatch"):
        route_through(SBATCH_DIR, Path(RES).resolve())
