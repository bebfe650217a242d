"""The v22sdk contract kit on the depth modality: one pytest item per check (pytest -v names each)."""

from v22sdk_depth import DepthModality

from v22sdk.testing import parametrize_with_checks


@parametrize_with_checks([DepthModality()])
def test_contract(modality, check):
    check(modality)
