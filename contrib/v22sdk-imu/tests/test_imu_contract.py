"""The v22sdk contract kit on the imu modality: one pytest item per check (pytest -v names each)."""

from v22sdk_imu import IMUModality

from v22sdk.testing import parametrize_with_checks


@parametrize_with_checks([IMUModality()])
def test_contract(modality, check):
    check(modality)
