"""The thesis's 'Improves' arithmetic on Table 3.4's printed numbers, and Table 3.5's relative improvement."""
import pytest

from fairviz.synth import thesis


def test_improves_reproduces_table_34_up_to_the_four_rounding_cells():
    rounding = {("ofi", 1): 0.004, ("dppl", 0): -0.001, ("dca", 2): 0.015, ("dca", 3): 0.047}
    for metric, (synthetic, real, printed) in thesis.TABLE_34.items():
        for k, (s, r, p) in enumerate(zip(synthetic, real, printed)):
            got = thesis.improves(metric, r, s)
            assert got == pytest.approx(p, abs=0.001 + 1e-9)
            assert round(got, 3) == pytest.approx(rounding.get((metric, k), p), abs=1e-9)


def test_improves_uses_one_as_the_ideal_of_di():
    assert thesis.improves("di", 1.109, 1.060) == pytest.approx(0.049)      # Table 3.4, DI, ages 63–90
    assert thesis.improves("di", 0.9, 1.2) == pytest.approx(-0.1)            # overshooting past 1 is worse
    assert thesis.improves("ofi", -0.03, 0.01) == pytest.approx(0.02)
    assert thesis.improves("ofi", None, 0.01) is None


def test_table_35_improvement_percentages():
    for (synthetic, real, printed), _ in thesis.TABLE_35.values():
        assert 100 * thesis.improvement(real, synthetic) == pytest.approx(printed, abs=0.06)
    assert thesis.improvement(0.0, 0.0) is None
