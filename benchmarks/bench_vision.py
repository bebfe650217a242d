"""Benchmark of the vision modality on real photographs. Prints its figures; asserts nothing.

    .venv/bin/python benchmarks/bench_vision.py [--repeat 15] [--copies 8] [--threads 1] [--rounds 15] [--out FILE]

Issue 21's raised target: the global token from a decoded 512×512 photo ≤ 6 ms CPU, reported
beside the decode (the floor), both measured in ``--rounds`` interleaved rounds over every file:
the median of the rounds is judged, and the range over rounds is reported beside it.
Figures go to results/benchmarks/bench_vision.json.

Target (issue 4): full tokenization (file read, decode, 128 attributes, embedding, contract
validation) of a 512×512 photograph ≤ 20 ms on one core. Photos are scikit-image's sample
photographs (astronaut, coffee, chelsea, rocket, immunohistochemistry, camera), area-resized to
512×512 and written as JPEG (quality 90) and PNG into a temporary folder.

Figures: per-image median time of ``tokenize_file`` (and of its parts: decode, attributes,
embedding), the folder throughput (every file tokenized once, in order, wall clock), the cost of
a 4×4 patch grid (``tokenize_file``, wall) and of 4×4 and 8×8 grids on the decoded array (CPU ms,
with the ratio to global-only ``tokenize`` of the same array in the same run), and — as a peer
measured in the same run — scikit-image's own GLCM + LBP + HOG on the same 128×128 texture
images next to ours. OpenCV and BLAS are pinned to ``--threads``
threads (default 1: one-core figures).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per image (median is reported)")
    parser.add_argument("--copies", type=int, default=8, help="copies of each file in the throughput folder")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--rounds",
        type=int,
        default=15,
        help="rounds of the headline figure (global token and decode, interleaved over every file); "
        "the median of the rounds' medians is judged and their range reported",
    )
    parser.add_argument(
        "--out",
        "--json",
        default=str(Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "bench_vision.json"),
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)  # before numpy is imported

    import cv2
    import numpy as np
    from skimage import data as skdata
    from skimage import feature as skfeature
    from v22sdk_vision import VisionModality
    from v22sdk_vision.decode import load_image
    from v22sdk_vision.embed import embed
    from v22sdk_vision.features import attributes, grey_of
    from v22sdk_vision.pixels import prepare
    from v22sdk_vision.texture import glcm, glcm_props, hog_blocks, lbp_uniform, texture_grey

    cv2.setNumThreads(args.threads)
    names = ["astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "camera"]
    m = VisionModality()
    m4 = VisionModality(grid=4)
    m8 = VisionModality(grid=8)

    cpu_log: list[float] = []

    def median_ms(fn, repeat=args.repeat):
        """Median wall ms; the median CPU ms of this thread goes to ``cpu_log`` (on a shared
        machine CPU time is the fairer one-core figure: it excludes time spent waiting for a core)."""
        fn()
        times, cpu = [], []
        for _ in range(repeat):
            c0, t0 = time.thread_time(), time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
        cpu_log.append(1000 * statistics.median(cpu))
        return 1000 * statistics.median(times)

    print(
        f"vision benchmark: OpenCV {cv2.__version__}, numpy {np.__version__}, python "
        f"{sys.version.split()[0]}, threads={args.threads}, cpus={os.cpu_count()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = []
        for name in names:
            img = getattr(skdata, name)()
            img = cv2.resize(img, (512, 512), interpolation=cv2.INTER_AREA)
            bgr = img[:, :, ::-1] if img.ndim == 3 else img
            for ext, params in ((".jpg", [cv2.IMWRITE_JPEG_QUALITY, 90]), (".png", [])):
                path = folder / f"{name}{ext}"
                cv2.imwrite(str(path), np.ascontiguousarray(bgr), params)
                files.append(path)

        print(
            f"\n{'file':28s} {'bytes':>8s} {'total ms':>9s} {'cpu ms':>7s} {'decode':>7s} {'attrs':>7s} {'embed':>7s} "
            f"{'grid=4':>7s} {'g0 cpu':>7s} {'g4 cpu':>7s} {'g8 cpu':>7s}"
        )
        totals, totals_cpu = [], []
        g0_cpu, g4_cpu, g8_cpu = [], [], []
        dec_cpu: list[float] = []
        for path in files:
            arr = load_image(path)
            rgb = prepare(arr, "x")
            total = median_ms(lambda: m.tokenize_file(path))
            totals_cpu.append(cpu_log[-1])
            dec = median_ms(lambda: load_image(path))
            dec_cpu.append(cpu_log[-1])
            att = median_ms(lambda: attributes(rgb))
            emb = median_ms(lambda: embed(rgb))
            grid = median_ms(lambda: m4.tokenize_file(path), repeat=max(3, args.repeat // 3))
            # patch grids on the decoded array (no decode): CPU ms, and the ratio to global-only
            few = max(3, args.repeat // 5)
            median_ms(lambda: m.tokenize(arr), repeat=few)
            g0_cpu.append(cpu_log[-1])
            median_ms(lambda: m4.tokenize(arr), repeat=few)
            g4_cpu.append(cpu_log[-1])
            median_ms(lambda: m8.tokenize(arr), repeat=few)
            g8_cpu.append(cpu_log[-1])
            totals.append(total)
            print(
                f"{path.name:28s} {path.stat().st_size:8d} {total:9.2f} {totals_cpu[-1]:7.2f} {dec:7.2f} {att:7.2f} {emb:7.2f} "
                f"{grid:7.1f} {g0_cpu[-1]:7.2f} {g4_cpu[-1]:7.1f} {g8_cpu[-1]:7.1f}"
            )
        print(
            f"\n512×512 photo, full tokenize_file: median {statistics.median(totals):.2f} ms, "
            f"max {max(totals):.2f} ms over {len(totals)} files; CPU time median "
            f"{statistics.median(totals_cpu):.2f} ms, max {max(totals_cpu):.2f} ms (target ≤ 20 ms)"
        )

        g0, g4, g8 = (statistics.median(v) for v in (g0_cpu, g4_cpu, g8_cpu))
        print(
            f"patch grids, tokenize(array) of a 512×512 photo, CPU ms (median of {len(files)} files): "
            f"global only {g0:.2f}, grid=4 (17 tokens) {g4:.1f} = {g4 / g0:.1f}× global, "
            f"grid=8 (65 tokens) {g8:.1f} = {g8 / g0:.1f}× global"
        )

        # folder throughput: every file tokenized once, in order (as `v22sdk tokenize DIR` would)
        throughput_dir = folder / "many"
        throughput_dir.mkdir()
        for k in range(args.copies):
            for path in files:
                (throughput_dir / f"{k}_{path.name}").write_bytes(path.read_bytes())
        paths = sorted(throughput_dir.iterdir())
        c0, t0 = time.thread_time(), time.perf_counter()
        for path in paths:
            m.tokenize_file(path)
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        print(
            f"folder throughput: {len(paths)} files in {wall:.2f} s = {len(paths) / wall:.1f} images/s "
            f"({1000 * wall / len(paths):.2f} ms/image wall, {1000 * cpu / len(paths):.2f} ms/image CPU)"
        )

        # peer in the same run: scikit-image's GLCM + LBP + HOG vs ours, on the same texture images
        ours_t, peer_t = [], []
        for path in files:
            t = texture_grey(grey_of(prepare(load_image(path), "x")))
            ours_t.append(median_ms(lambda: (glcm_props(glcm(t // 32)), lbp_uniform(t), hog_blocks(t))))

            def peer():
                p = skfeature.graycomatrix(
                    t // 32, [1], [0, np.pi / 4, np.pi / 2, 3 * np.pi / 4], 8, symmetric=True, normed=True
                )
                for prop in ("contrast", "energy", "homogeneity", "correlation"):
                    skfeature.graycoprops(p, prop)
                skfeature.local_binary_pattern(t, 8, 1, "uniform")
                skfeature.hog(t, 9, (8, 8), (2, 2), "L2-Hys", feature_vector=False)

            peer_t.append(median_ms(peer))
        ours_m, peer_m = statistics.median(ours_t), statistics.median(peer_t)
        print(
            f"GLCM+LBP+HOG on 128×128: ours {ours_m:.2f} ms, scikit-image {peer_m:.2f} ms "
            f"(ratio ours/skimage {ours_m / peer_m:.2f})"
        )
        # The headline figure, in rounds: each round times the global token and the decode of every
        # file (interleaved, full repeat count); a round's figure is the median over the files. The
        # spread between rounds (machine state, frequency, caches) is reported, not only one round.
        arrays = [(path, load_image(path)) for path in files]
        round_g0, round_dec = [], []
        file_g0: list[list[float]] = [[] for _ in arrays]  # per file, its figure in each round
        file_dec: list[list[float]] = [[] for _ in arrays]
        for _ in range(args.rounds):
            g, d = [], []
            for i, (path, arr) in enumerate(arrays):
                median_ms(lambda: m.tokenize(arr))
                g.append(cpu_log[-1])
                file_g0[i].append(cpu_log[-1])
                median_ms(lambda: load_image(path))
                d.append(cpu_log[-1])
                file_dec[i].append(cpu_log[-1])
            round_g0.append(statistics.median(g))
            round_dec.append(statistics.median(d))
        # the range over files of the judged figures comes from the same rounds: each file's median
        file_g0_med = [statistics.median(v) for v in file_g0]
        file_dec_med = [statistics.median(v) for v in file_dec]
        g0r, d0 = statistics.median(round_g0), statistics.median(round_dec)
        ratios = [g / d for g, d in zip(round_g0, round_dec)]
        print(
            f"global token from the decoded 512×512 array: {g0r:.2f} ms CPU, median of {args.rounds} rounds "
            f"(rounds {min(round_g0):.2f}–{max(round_g0):.2f}; target ≤ 6 ms: {'met' if g0r <= 6 else 'NOT met'}); "
            f"the decode itself {d0:.2f} ms CPU (the floor; rounds {min(round_dec):.2f}–{max(round_dec):.2f}); "
            f"global / decode {statistics.median(ratios):.2f} (rounds {min(ratios):.2f}–{max(ratios):.2f})"
        )
    if args.no_write:
        return
    from v22sdk.evidence import write_result

    n = len(files)
    rng = lambda v: f"{min(v):.2f}–{max(v):.2f}"  # noqa: E731
    write_result(
        args.out,
        {
            "files": [p.name for p in files],
            "tokenize_file_cpu_ms": totals_cpu,
            "tokenize_file_wall_ms": totals,
            "decode_cpu_ms": dec_cpu,
            "global_cpu_ms": g0_cpu,
            "grid4_cpu_ms": g4_cpu,
            "grid8_cpu_ms": g8_cpu,
            "glcm_lbp_hog_ms": ours_t,
            "skimage_ms": peer_t,
            "repeat": args.repeat,
            "rounds": args.rounds,
            "round_global_cpu_ms": round_g0,
            "round_decode_cpu_ms": round_dec,
            "round_file_global_cpu_ms": file_g0,
            "round_file_decode_cpu_ms": file_dec,
            "loadavg_end": list(os.getloadavg()),
        },
        name="bench_vision",
        criterion={
            "targets_ms_cpu": {"global token from the decoded array": 6, "tokenize_file": 20},
            "statistic": f"median over {n} photos of each photo's median CPU ms; the decode and the global "
            f"token: the median of {args.rounds} rounds of that statistic, the range over rounds beside it, and the "
            f"range over files of each file's median over the rounds",
        },
        tables={
            "vision": {
                "columns": [
                    f"512×512 photo ({n} files: JPEG 90 and PNG)",
                    "CPU ms, median",
                    "range over files",
                    f"range over {args.rounds} rounds",
                    "target",
                    "met",
                ],
                "align": "lrrrll",
                "rows": [
                    [
                        "decode (load_image): the floor",
                        f"{d0:.2f}",
                        rng(file_dec_med),
                        rng(round_dec),
                        "—",
                        "—",
                    ],
                    [
                        "global token from the decoded array (tokenize(arr))",
                        f"{g0r:.2f}",
                        rng(file_g0_med),
                        rng(round_g0),
                        "≤ 6 ms",
                        "yes" if g0r <= 6 else "no",
                    ],
                    [
                        "global token / decode",
                        f"{statistics.median(ratios):.2f}",
                        "—",
                        rng(ratios),
                        "—",
                        "—",
                    ],
                    [
                        "full tokenize_file (read, decode, attributes, embedding, checks)",
                        f"{statistics.median(totals_cpu):.2f}",
                        rng(totals_cpu),
                        "—",
                        "≤ 20 ms",
                        "yes" if statistics.median(totals_cpu) <= 20 else "no",
                    ],
                    ["grid=4 (17 tokens) from the array", f"{g4:.1f}", rng(g4_cpu), "—", "—", "—"],
                    ["grid=8 (65 tokens) from the array", f"{g8:.1f}", rng(g8_cpu), "—", "—", "—"],
                ],
            }
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
