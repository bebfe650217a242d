import sys
import textwrap

import pytest

from v22sdk import DuplicateNameError, PluginError, Registry, UnknownNameError, hookimpl
from v22sdk.plugins import PluginInfo

from .helpers import RampModality, make_plugin


def fake_dist(root, dist, module, code, entry="plug"):
    """A minimal installed distribution with one v22sdk entry point, found through sys.path."""
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[v22sdk]\n{entry} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("fakeplug_")]:
        del sys.modules[name]


GOOD = """
from v22sdk import hookimpl
from tests.core.helpers import RampModality
@hookimpl
def v22sdk_register_modalities():
    return RampModality
"""


def test_entry_point_plugin_is_loaded_with_its_distribution(site):
    fake_dist(site, "ramp-dist", "fakeplug_good", GOOD, entry="ramp")
    r = Registry(only=["ramp"])
    assert r.names("modalities") == ["ramp"]
    info = r.provider("modalities", "ramp")
    assert (info.dist, info.version, info.ok) == ("ramp-dist", "1.0", True)


def test_plugin_that_raises_on_import_is_recorded_and_skipped(site):
    fake_dist(site, "bad-dist", "fakeplug_bad", "raise RuntimeError('boom at import')", entry="bad")
    fake_dist(site, "ramp-dist", "fakeplug_good", GOOD, entry="ramp")
    r = Registry(only=["bad", "ramp"], strict=False)
    assert r.names("modalities") == ["ramp"]
    [broken] = r.broken
    assert broken.name == "bad" and "boom at import" in broken.error and broken.dist == "bad-dist"
    with pytest.raises(PluginError, match="boom at import"):
        Registry(only=["bad"], strict=True)


def test_strict_from_environment(site, monkeypatch):
    fake_dist(site, "bad-dist", "fakeplug_bad2", "import not_a_module_anywhere", entry="bad2")
    monkeypatch.setenv("V22SDK_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="not_a_module_anywhere"):
        Registry(only=["bad2"])


def test_load_only_and_disable_switches(site, monkeypatch):
    fake_dist(site, "ramp-dist", "fakeplug_good", GOOD, entry="ramp")
    monkeypatch.setenv("V22SDK_LOAD_PLUGINS", "")
    assert Registry().plugins == {}
    monkeypatch.setenv("V22SDK_LOAD_PLUGINS", "ramp")
    assert list(Registry().plugins) == ["ramp"]
    monkeypatch.delenv("V22SDK_LOAD_PLUGINS")
    monkeypatch.setenv("V22SDK_DISABLE_PLUGINS", "ramp")
    assert "ramp" not in Registry().plugins


def test_duplicate_names_name_both_distributions(site):
    fake_dist(site, "first-dist", "fakeplug_a", GOOD, entry="a")
    fake_dist(site, "second-dist", "fakeplug_b", GOOD, entry="b")
    r = Registry(only=["a", "b"], strict=False)
    [broken] = r.broken
    assert "first-dist" in broken.error and "second-dist" in broken.error
    with pytest.raises(DuplicateNameError, match="both distribution 'first-dist' and distribution 'second-dist'"):
        Registry(only=["a", "b"], strict=True)


def test_hook_that_raises_or_returns_garbage_is_broken():
    class Raises:
        @hookimpl
        def v22sdk_register_modalities(self):
            raise ValueError("cannot register")

    class Garbage:
        @hookimpl
        def v22sdk_register_engines(self):
            return ["not a class"]

    class Misspelled:
        @hookimpl
        def v22sdk_register_modalitys(self):
            return RampModality

    r = Registry(entry_points=False, strict=False)
    assert not r.register(Raises(), "raises").ok
    assert "not a class" in r.register(Garbage(), "garbage").error
    assert "v22sdk_register_modalitys" in r.register(Misspelled(), "typo").error
    r.register(make_plugin(RampModality), "ramp")
    assert r.names("modalities") == ["ramp"] and len(r.broken) == 3


def test_unknown_names_list_what_is_installed(tmp_path):
    r = Registry(entry_points=False)
    r.register(make_plugin(RampModality), "ramp")
    with pytest.raises(UnknownNameError, match="installed: ramp"):
        r.modality("depth")
    assert r.modality_for_path("a.RAMP") == "ramp"
    with pytest.raises(UnknownNameError, match="'.wav'"):
        r.modality_for_path("a.wav")
    assert isinstance(r.modality("ramp", window=4), RampModality)


def test_plugin_info_json():
    info = PluginInfo("x", "d", "1", "m", error="bad")
    assert info.to_dict()["error"] == "bad" and info.to_dict()["ok"] is False
