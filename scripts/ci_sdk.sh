#!/usr/bin/env bash
# The SDK as its users get it (issue 19), run by .ci/run after the test suite, with the dev
# virtualenv .venv (requirements-dev.txt) in place:
#   1. lint and format check (scripts/lint.sh --format) and types (mypy: the public API --strict, the rest at the default level);
#   2. the wheel: build the sdist and the wheel, check what the wheel holds and print its size,
#      install it (not editable) in a clean virtualenv with only its declared dependencies (plus the
#      CPU torch), and there run `v22sdk plugins list`, `v22sdk run` on a bundled example and the
#      contract kit on contrib/v22sdk-hello built as its own wheel; type-check a plugin against it;
#   3. the documentation site (mkdocs build --strict).
# Each step prints a "ci_sdk:" line with its wall time. Work files go to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
py="$root/.venv/bin/python"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step() { echo "ci_sdk: $1 ($(( SECONDS - t0 )) s)"; t0=$SECONDS; }
t0=$SECONDS

# 1. lint and types ---------------------------------------------------------------------------
bash scripts/lint.sh --format
step "lint passed"
"$py" -m mypy --cache-dir "$work/mypy-cache"
step "mypy passed (public API strict)"

# 2. the wheel ----------------------------------------------------------------------------------
"$py" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$py" -m build --wheel --outdir "$work/dist" contrib/v22sdk-hello >>"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/v22sdk-*.whl)"  # a platform wheel: it holds the compiled memory scan
ls "$work"/dist/v22sdk-*.tar.gz >/dev/null
"$py" scripts/check_wheel.py "$wheel"
step "sdist and wheels built, wheel contents checked"

python3 -m venv "$work/venv"
venv="$work/venv/bin"
"$venv/pip" install -q torch==2.13.0          # the CPU build first, so the wheel does not pull CUDA
"$venv/pip" install -q "$wheel"
"$venv/pip" install -q --no-deps "$work"/dist/v22sdk_hello-*.whl
step "wheels installed in a clean virtualenv"

# everything below runs outside the source tree, so only the installed wheel can be imported
cd "$work"
export V22SDK_MEMORY="$work/memory.sqlite3" V22SDK_CACHE="$work/cache"
"$venv/python" - <<'PY'
import pathlib, v22sdk, v22sdk_text
where = pathlib.Path(v22sdk.__file__).parent
assert "site-packages" in str(where), where      # the wheel, not the source tree
assert (where / "py.typed").is_file() and (where / "engine/data/default.pt").is_file()
print("ci_sdk: imported v22sdk", v22sdk.__version__, "from", where)
PY
"$venv/v22sdk" --version
"$venv/v22sdk" plugins list
"$venv/v22sdk" plugins list --json >"$work/plugins.json"
"$venv/python" - "$work/plugins.json" <<'PY'
import json, sys
plugins = json.load(open(sys.argv[1]))
assert all(p["ok"] for p in plugins), [p for p in plugins if not p["ok"]]
have = {(kind, n) for p in plugins for kind in ("modalities", "engines", "memory_backends") for n in p[kind]}
want = {("modalities", "text"), ("modalities", "vision"), ("modalities", "audio"), ("modalities", "hello"),
        ("engines", "v22"), ("memory_backends", "tiered")}
assert want <= have, sorted(want - have)
PY
example="$("$venv/python" -c 'import pathlib, v22sdk.engine.data as d; print(pathlib.Path(d.__file__).parent / "examples/seven.png")')"
"$venv/v22sdk" run "$example" --json | tee "$work/run.json"
"$venv/python" -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["modality"] == "vision" and r["output"] == "七" and r["familiar"] is True, r' "$work/run.json"
mkdir "$work/hello-tests" && cp "$root"/contrib/v22sdk-hello/tests/*.py "$work/hello-tests/"
"$venv/python" -m pytest -q -p no:cacheprovider "$work/hello-tests"
step "wheel: plugins list, run on a bundled example, contract kit on the hello wheel"

# a plugin author's file, type-checked --strict against the installed wheel (the dev venv's mypy,
# resolving imports in the clean virtualenv); its twin with three errors must fail with exactly three
"$py" -m mypy --strict --no-incremental --python-executable "$venv/python" "$root/tests/typing/typed_plugin.py"
"$venv/python" "$root/tests/typing/typed_plugin.py"
if "$py" -m mypy --strict --no-incremental --python-executable "$venv/python" \
        "$root/tests/typing/typed_plugin_wrong.py" >"$work/wrong.txt" 2>&1; then
    echo "ci_sdk: mypy accepted typed_plugin_wrong.py: the SDK's types do not reach the plugin" >&2; exit 1
fi
# exactly the three planted errors, each a type error (an SDK name seen as Any or not found would differ)
for want in "typed_plugin_wrong.py:14: error: Argument \"offsets\" to \"Encoding\"" \
            "typed_plugin_wrong.py:18: error: Incompatible return value type (got \"int\", expected \"str\")" \
            "typed_plugin_wrong.py:22: error: Incompatible return value type (got \"int\", expected \"str\")" \
            "Found 3 errors in 1 file"; do
    grep -qF "$want" "$work/wrong.txt" || { echo "ci_sdk: expected mypy to say: $want" >&2; cat "$work/wrong.txt"; exit 1; }
done
cd "$root"
step "a plugin type-checks --strict against the wheel; its wrong twin is caught (3 errors)"

# 3. the documentation site -----------------------------------------------------------------------
NO_MKDOCS_2_WARNING=1 "$root/.venv/bin/mkdocs" build --strict --site-dir "$work/site"
step "docs site built (--strict)"
