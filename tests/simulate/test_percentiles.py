"""``simulate.percentiles``: NumPy's linear percentiles, bit for bit, without ``numpy.ma``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from trainbill.simulate import Summary, percentiles

_Q = (10, 50, 90, 99)


def _bits(values: tuple[float, ...] | np.ndarray) -> list[str]:
    """Exact representations (``float.hex``), so -0.0 differs from 0.0 and NaN equals NaN."""
    return [float(v).hex() for v in values]


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(20261204)
    out = [rng.lognormal(13.0, 0.4, size=n) for n in (1, 2, 3, 4, 5, 7, 10, 11, 100, 101, 4097)]
    out += [rng.normal(size=n) for n in (9, 1000, 20_000)]
    out.append(rng.integers(0, 4, size=500).astype(np.float64))  # many ties
    out.append(np.full(37, 2.5e6))  # a quiet simulation: every trial the same bill
    out.append(np.array([0.0, -0.0, 0.0, -0.0, 1.0]))  # signed zeros tie
    out.append(np.array([-0.0] * 6))
    out.append(np.array([1.0, np.inf, 3.0, 2.0]))
    out.append(np.array([-np.inf, 1.0, 2.0, np.inf]))
    out.append(np.array([np.inf] * 3))
    out.append(np.array([1.0, np.nan, 3.0]))
    out.append(np.array([np.nan]))
    out.append(np.array([1e308, -1e308, 1.7e308, 5e-324]))
    out.append(rng.permutation(np.arange(1000, dtype=np.float64)))
    return out


@pytest.mark.parametrize("sample", _samples(), ids=lambda s: f"n{s.size}")
@pytest.mark.parametrize("q", [_Q, (0, 100), (0.0, 25.0, 33.3, 66.7, 75.0, 100.0), (50,)])
def test_equals_numpy_percentile_bit_for_bit(sample: np.ndarray, q: tuple[float, ...]) -> None:
    """The reference is ``np.percentile`` itself (its default method, "linear")."""
    before = sample.copy()
    with np.errstate(invalid="ignore"):  # inf - inf in NumPy's own interpolation
        expected = np.percentile(sample, q)
        got = percentiles(sample, q)
    assert _bits(got) == _bits(expected)
    assert _bits(sample) == _bits(before)  # the sample is not reordered in place


def test_by_hand() -> None:
    """Five values 1..5: rank (5 - 1) × 0.10 = 0.4 → 1 + 0.4 × (2 - 1) = 1.4; the median is
    rank 2 → 3; rank 3.6 → 4 + 0.6 × (5 - 4) = 4.6; rank 3.96 → 4.96."""
    got = percentiles(np.array([5.0, 3.0, 1.0, 4.0, 2.0]))
    assert got == pytest.approx((1.4, 3.0, 4.6, 4.96), rel=1e-15)


def test_what_it_does_not_handle_goes_to_numpy() -> None:
    """Empty, 2-D, integer samples and out-of-range q behave exactly as ``np.percentile``."""
    ints = np.array([1, 2, 3, 4])
    assert percentiles(ints) == tuple(float(v) for v in np.percentile(ints, _Q))
    grid = np.arange(12.0).reshape(3, 4)
    assert percentiles(grid) == tuple(float(v) for v in np.percentile(grid, _Q))
    with pytest.raises(IndexError):
        np.percentile(np.array([]), _Q)
    with pytest.raises(IndexError):
        percentiles(np.array([]))
    with pytest.raises(ValueError, match="range"):
        percentiles(np.array([1.0, 2.0]), (101,))


def test_summary_uses_it() -> None:
    """``Summary.of`` reports these percentiles."""
    x = np.random.default_rng(7).lognormal(10.0, 1.0, size=999)
    s = Summary.of(x)
    assert (s.p10, s.p50, s.p90, s.p99) == percentiles(x)
    assert _bits((s.p10, s.p50, s.p90, s.p99)) == _bits(np.percentile(x, _Q))


def test_does_not_import_numpy_ma() -> None:
    """The point of it: a forecast's budget never loads ``numpy.ma`` (issue #21 start-up)."""
    code = (
        "import sys, numpy as np\n"
        "from trainbill.simulate import percentiles\n"
        "percentiles(np.arange(10.0))\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"
