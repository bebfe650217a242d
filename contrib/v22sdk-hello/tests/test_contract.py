"""Run the v22sdk contract kit on the hello modality, three ways (pick one in your own plugin).

The kit's pytest plugin is active as soon as v22sdk is installed: nothing to copy, no conftest.
"""

import json

from v22sdk_hello import HelloModality

from v22sdk.testing import ModalityContractTests, list_checks, parametrize_with_checks


# 1. One pytest item per check and configuration: "hello-check_unit_norm_emb",
#    "hello(frame_seconds=0.2)-check_unit_norm_emb", ...
@parametrize_with_checks([HelloModality(), HelloModality(frame_seconds=0.2)])
def test_contract(modality, check):
    check(modality)


# 2. The same, for those who prefer subclassing.
class TestHelloContract(ModalityContractTests):
    modality_class = HelloModality


# 3. The whole report at once (the fixture honours --v22sdk-max-examples / --v22sdk-xfails-file).
def test_report(v22sdk_check):
    report = v22sdk_check(HelloModality)
    report.raise_for_failures()
    assert report.passed == report.ran and report.ran == list_checks()
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True
