"""Both contrib plugins through the contract kit, one pytest item per check."""

import importlib.metadata as md

import pytest
from v22sdk_depth import DepthModality
from v22sdk_imu import IMUModality

from v22sdk import Registry
from v22sdk.testing import parametrize_with_checks


@parametrize_with_checks([DepthModality()])
def test_contract(modality, check):
    check(modality)


@pytest.mark.slow  # about 70 s in all: the kit's long inputs at 6 channels and 100-1000 Hz
@parametrize_with_checks([IMUModality()])
def test_contract_imu(modality, check):
    check(modality)


@pytest.mark.parametrize("dist, name", [("v22sdk-depth", "depth"), ("v22sdk-imu", "imu")])
def test_installed_plugin_is_in_the_registry(dist, name):
    try:
        md.distribution(dist)
    except md.PackageNotFoundError:
        pytest.skip(f"{dist} is not pip-installed in this environment (pip install -e contrib/{dist})")
    registry = Registry()
    assert name in registry.names("modalities")
    assert registry.provider("modalities", name).dist == dist
