"""Services: the work the command line (and the web app) asks for, over the layers below.

- :mod:`rankscope.services.snapshots`: take a snapshot of an endpoint over a query set;
- :mod:`rankscope.services.snapshot_diff`: compare snapshots (RBO, Jaccard, churn, moves,
  metric deltas) and find the holes in the judgments;
- :mod:`rankscope.services.regression`: the CI check (is a run worse than its baseline?);
- :mod:`rankscope.services.demo`: write the bundled demo collection to a directory.
"""

from rankscope._aliases import redirect

# deprecated paths for one release: the grading campaigns' modules were "evaluations"
# (running one moved on to campaign_runs when campaigns was split)
redirect({
    "rankscope.services.evaluations": "rankscope.services.campaigns",
    "rankscope.services.evaluation_data": "rankscope.services.campaign_data",
}, also={"rankscope.services.evaluations": ["rankscope.services.campaign_runs"]})
