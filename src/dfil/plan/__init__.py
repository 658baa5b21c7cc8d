"""A budget planner: which of the paper's claims N GPU-hours can settle at a stated power,
and the grid that runs them (pure Python: numpy, scipy, statsmodels; no torch).

- :mod:`.claims`: the report's claims with the paper's printed effect, spread and n, and
  the grid cells each side reads (:func:`paper_claims`, the planner's one reader);
- :mod:`.power`: seeds a side for the claim's declared test (closed form or simulation);
- :mod:`.price`: GPU-hours per run from the cost model, and the seeds a plan draws;
- :mod:`.choose`: the exact 0-1 program choosing the claims;
- :mod:`.budget`: the plan for a budget; :mod:`.table`: what ``dfil grid plan`` prints;
- :mod:`.planfile`: the plan as a grid file, with its ``plan:`` block;
- :mod:`.achieved`: what the grid that ran can show of each claim (power and minimum
  detectable effect at the seeds that ran; planned or not).
"""

from dfil.plan.budget import Plan, make_plan, select
from dfil.plan.claims import PaperClaim, paper_claims
from dfil.plan.planfile import plan_config, plan_record
from dfil.plan.price import coordinate_hours, seed_order
from dfil.plan.table import coverage, format_plan

__all__ = ["PaperClaim", "Plan", "coordinate_hours", "coverage", "format_plan", "make_plan",
           "paper_claims", "plan_config", "plan_record", "seed_order", "select"]
