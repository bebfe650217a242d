#!/usr/bin/env bash
# Services the scale-out tests need on a fresh Debian machine: PostgreSQL's server binaries.
# The tests start their own throwaway server (initdb in a temp dir, loopback, free port) and run
# it as the 'postgres' user when invoked as root; nothing is started or enabled system-wide here.
# Idempotent; without root (or apt) it only reports what is missing and the tests skip with a reason.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "ci_services: PostgreSQL binaries present: $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # 'postgresql' pulls the distribution's major version (15 on Debian 12); the package's
    # post-install may start a cluster on 5432, which the tests do not use.
    apt-get install -y -qq --no-install-recommends postgresql
else
    echo "ci_services: no PostgreSQL binaries and no root/apt: the PostgreSQL tests will skip" >&2
fi
# runuser (util-linux) runs initdb/postgres as 'postgres' when the tests run as root.
id postgres >/dev/null 2>&1 || echo "ci_services: no 'postgres' user: run the tests as a non-root user" >&2

# The data suite (v22sdk data build-suite; tests/engine/test_suite.py): espeak-ng speaks the
# digits, fluidsynth renders notes from the FluidR3 General MIDI soundfont. Without them the
# builder names what is missing and those tests skip.
suite_packages=()
command -v espeak-ng >/dev/null || suite_packages+=(espeak-ng)
command -v fluidsynth >/dev/null || suite_packages+=(fluidsynth)
[ -f /usr/share/sounds/sf2/FluidR3_GM.sf2 ] || suite_packages+=(fluid-soundfont-gm)
if [ ${#suite_packages[@]} -eq 0 ]; then
    echo "ci_services: data-suite tools present: espeak-ng, fluidsynth, FluidR3_GM.sf2"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${suite_packages[@]}"
else
    echo "ci_services: missing ${suite_packages[*]} and no root/apt: the data-suite tests will skip" >&2
fi

# Real recordings for the open-set measurement (v22sdk.engine.ood; tests/engine/test_ood.py):
# Allison Smith's recorded English prompts and digits (CC-BY-SA-3.0), recorded Mandarin syllables
# (gcin-voice: GPL-3/LGPL-3 and CC-BY-3.0) and Tang poems (fortunes-zh). Without them the builder
# names what is missing and those tests skip.
ood_packages=()
[ -f /usr/share/asterisk/sounds/en_US_f_Allison/digits/0.wav ] || ood_packages+=(asterisk-core-sounds-en-wav)
[ -d /usr/share/gcin-voice/ogg ] || ood_packages+=(gcin-voice)
[ -f /usr/share/games/fortunes/tang300 ] || ood_packages+=(fortunes-zh)
if [ ${#ood_packages[@]} -eq 0 ]; then
    echo "ci_services: recordings for the open-set set present: asterisk sounds, gcin-voice, fortunes-zh"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${ood_packages[@]}"
else
    echo "ci_services: missing ${ood_packages[*]} and no root/apt: the open-set set's tests will skip" >&2
fi
