"""Monte Carlo of a training run: failures, spot reclaims, restarts, checkpoints, stragglers,
spot prices.

The deterministic forecast prices *expected* disruptions. Finance asks for the worst case, so
this package samples the disruptions of many runs and prices every trial with the very same
cost drivers (``trainbill.costs``) as the forecast: it perturbs the ``Usage``, never the code
path. The drivers' arithmetic broadcasts, so a chunk of trials is one ``Usage`` whose sampled
fields (``PERTURBED``) and spot price multiplier (``purchase.spot_price_scale``) are arrays,
priced in one pass by ``costs.price_arrays``: no per-trial Python loop, no fitted or linearised
copy of the drivers, and a trial's cost is what ``forecast_usage`` says for that trial's usage.

Per trial we sample, all vectorized (no Python loop per trial or per event):

* **stragglers**: the step waits for the slowest GPU. Jitter (the expected maximum of N
  Gaussian step times, already in the forecast's sync stall) averages over ≥10⁴ steps, so it
  stays at its expectation; thermal/power **throttling episodes** arrive as a Poisson process
  per GPU-hour (so their cost grows with GPU count), each slowing every step by a fraction for
  a gamma-distributed duration;
* **checkpoint stalls**: each write's stall is gamma-distributed around the forecast's mean
  (a sum of n gammas is one gamma, so one draw per trial);
* **hardware failures**: Poisson(rate × GPUs × exposed hours / 24) per trial;
* **spot reclaims**: Poisson(hazard × spot nodes × exposed hours) per trial;
* per failure or reclaim: work lost since the last checkpoint, uniform within the interval,
  plus a gamma-distributed restart (mean = the plan's restart time);
* **spot price**: uniform within its observed range (one average multiplier per trial).

Randomness: NumPy ``Generator`` only, no global seeding. Trials come in fixed blocks of
``BLOCK`` trials; block b draws from ``SeedSequence(seed).spawn(n_blocks)[b]`` (itself split into
one stream per random component, so scans over checkpoint intervals reuse the same numbers:
common random numbers). Chunks are whole blocks, so results do not depend on ``chunk_size``.
Memory: 16 bytes per trial are kept for exact percentiles (160 MB at the ``MAX_TRIALS`` cap);
everything else is streamed per chunk.
"""

from trainbill.simulate.run import simulate
from trainbill.simulate.sampling import (
    BLOCK,
    MAX_TRIALS,
    PERTURBED,
    SimulationParams,
    TrialSamples,
    expected_usage,
)
from trainbill.simulate.studies import (
    CheckpointStudy,
    SpotComparison,
    checkpoint_study,
    on_demand_usage,
    spot_comparison,
    spot_range_of_on_demand,
    with_interval,
    young_daly_interval,
)
from trainbill.simulate.summary import Histogram, Simulation, Summary
from trainbill.simulate.summary import percentiles as percentiles

__all__ = [
    "BLOCK",
    "MAX_TRIALS",
    "PERTURBED",
    "CheckpointStudy",
    "Histogram",
    "Simulation",
    "SimulationParams",
    "SpotComparison",
    "Summary",
    "TrialSamples",
    "checkpoint_study",
    "expected_usage",
    "on_demand_usage",
    "simulate",
    "spot_comparison",
    "spot_range_of_on_demand",
    "with_interval",
    "young_daly_interval",
]
