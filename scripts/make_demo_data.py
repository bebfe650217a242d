#!/usr/bin/env python
"""Generate the bundled demo data set (deterministic, seeded) and optionally train a checkpoint on it.

    python scripts/make_demo_data.py                        # writes v22sdk/engine/data/demo/
    python scripts/make_demo_data.py --train -c demo.pt     # ... and trains a demo checkpoint (small preset)
    python scripts/make_demo_data.py --results results/engine/verification.json   # upstream's table, both engines

The demo set stays for tests and for upstream's verification table; the bundled default
checkpoint is trained on the real data suite by ``scripts/train_default.py`` (its result file is
results/engine/default-checkpoint.json). The verification table is written as a result file
(``v22sdk.evidence``) that docs/results.md renders. Tokens are cached in a temporary folder, never
in the user's token cache.

Contents (all drawn/synthesised here, nothing downloaded):

* ``images/``: 64×64 PNGs of apples (→ 苹果) and suns (→ 太阳) drawn with OpenCV (14 + 14 for
  training, 10 + 10 unseen ones pinned to the test split), and coloured shapes (红圆 / 蓝方 / 绿三角);
* ``audio/``: 0.5 s, 16 kHz WAVs of low / mid / high tones (→ 低音 / 中音 / 高音) whose test
  frequencies are not among the training ones, plus white noise (→ 噪声) and rising chirps (→ 滑音);
* ``text.tsv``: short Chinese dialogue pairs;
* manifests: ``demo.jsonl`` (everything), ``image.jsonl`` (apple/sun), ``audio.jsonl`` (tones).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "v22sdk" / "engine" / "data" / "demo"
SR = 16000

TEXT_PAIRS = [
    ("你好", "你好呀"),
    ("早上好", "早安"),
    ("晚上好", "晚上好呀"),
    ("谢谢你", "不客气"),
    ("再见", "明天见"),
    ("你叫什么名字？", "我叫小白"),
    ("你几岁了？", "我三岁了"),
    ("今天天气怎么样？", "今天是晴天"),
    ("下雨了吗？", "没有下雨"),
    ("你吃饭了吗？", "我吃过了"),
    ("你喜欢什么？", "我喜欢苹果"),
    ("太阳是什么颜色？", "太阳是黄色的"),
    ("苹果是什么颜色？", "苹果是红色的"),
    ("我很开心！", "太好了"),
    ("我有点累", "休息一下吧"),
    ("现在几点了？", "现在三点"),
    ("你在做什么？", "我在看书"),
    ("我们去公园吧", "好的走吧"),
    ("这个多少钱？", "十块钱"),
    ("你会唱歌吗？", "我会唱歌"),
    ("外面冷不冷？", "外面很冷"),
    ("请坐", "谢谢"),
    ("对不起", "没关系"),
    ("生日快乐！", "谢谢你"),
    ("你住在哪里？", "我住在北京"),
    ("你喜欢音乐吗？", "我喜欢音乐"),
    ("明天见", "明天见"),
    ("好久不见", "好久不见了"),
    ("你好吗？", "我很好"),
    ("晚安", "晚安好梦"),
]


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([20260713, *key])


def draw_apple(seed: int) -> np.ndarray:
    import cv2

    r = _rng(1, seed)
    bg = tuple(int(v) for v in r.integers(200, 256, 3))
    img = np.full((64, 64, 3), bg, np.uint8)
    cx, cy, rad = int(r.integers(26, 38)), int(r.integers(30, 40)), int(r.integers(14, 21))
    red = (int(r.integers(0, 40)), int(r.integers(0, 50)), int(r.integers(170, 240)))  # BGR
    cv2.circle(img, (cx - rad // 3, cy), rad, red, -1, cv2.LINE_AA)
    cv2.circle(img, (cx + rad // 3, cy), rad, red, -1, cv2.LINE_AA)
    cv2.line(img, (cx, cy - rad + 2), (cx + 2, cy - rad - 7), (20, 60, 100), 2, cv2.LINE_AA)
    cv2.ellipse(img, (cx + 6, cy - rad - 4), (5, 2), -30, 0, 360, (40, 160, 40), -1, cv2.LINE_AA)
    return img


def draw_sun(seed: int) -> np.ndarray:
    import cv2

    r = _rng(2, seed)
    sky = (int(r.integers(200, 256)), int(r.integers(150, 210)), int(r.integers(80, 140)))  # BGR sky blue
    img = np.full((64, 64, 3), sky, np.uint8)
    cx, cy, rad = int(r.integers(26, 38)), int(r.integers(26, 38)), int(r.integers(9, 14))
    yellow = (int(r.integers(0, 60)), int(r.integers(190, 240)), int(r.integers(230, 256)))
    n, phase = int(r.integers(8, 13)), float(r.uniform(0, np.pi))
    for k in range(n):
        a = phase + 2 * np.pi * k / n
        p0 = (int(cx + (rad + 3) * np.cos(a)), int(cy + (rad + 3) * np.sin(a)))
        p1 = (int(cx + (rad + 11) * np.cos(a)), int(cy + (rad + 11) * np.sin(a)))
        cv2.line(img, p0, p1, yellow, 2, cv2.LINE_AA)
    cv2.circle(img, (cx, cy), rad, yellow, -1, cv2.LINE_AA)
    return img


def draw_shape(kind: str, seed: int) -> np.ndarray:
    import cv2

    r = _rng(3, seed, ord(kind[0]))
    img = np.full((64, 64, 3), tuple(int(v) for v in r.integers(220, 256, 3)), np.uint8)
    jitter = lambda: int(r.integers(-30, 30))  # noqa: E731
    cx, cy, s = int(r.integers(24, 40)), int(r.integers(24, 40)), int(r.integers(10, 18))
    if kind == "circle":
        cv2.circle(img, (cx, cy), s, (40 + jitter(), 40 + jitter(), 210 + jitter() // 2), -1, cv2.LINE_AA)
    elif kind == "square":
        cv2.rectangle(img, (cx - s, cy - s), (cx + s, cy + s), (210 + jitter() // 2, 60 + jitter(), 40 + jitter()), -1)
    else:
        pts = np.array([[cx, cy - s], [cx - s, cy + s], [cx + s, cy + s]], np.int32)
        cv2.fillPoly(img, [pts], (50 + jitter(), 180 + jitter(), 50 + jitter()), cv2.LINE_AA)
    return img


def tone(freq: float, seed: int) -> np.ndarray:
    t = np.arange(int(0.5 * SR)) / SR
    amp = 0.3 + 0.3 * _rng(4, seed).random()
    env = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.02)  # 20 ms fades: no clicks
    return (amp * env * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def noise(seed: int) -> np.ndarray:
    return (0.2 * _rng(5, seed).standard_normal(int(0.5 * SR))).clip(-1, 1).astype(np.float32)


def chirp(seed: int) -> np.ndarray:
    r = _rng(6, seed)
    f0, f1 = float(r.uniform(150, 300)), float(r.uniform(1500, 3000))
    t = np.arange(int(0.5 * SR)) / SR
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * t[-1]))
    return (0.4 * np.sin(phase)).astype(np.float32)


TONES = {  # label: (training frequencies, held-out test frequencies), Hz
    "低音": ([110, 130, 150, 170, 190, 210, 230, 250], [120, 180, 240]),
    "中音": ([400, 450, 500, 550, 600, 650, 700, 750], [425, 575, 725]),
    "高音": ([1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600], [1300, 1900, 2500]),
}


def generate(out: Path = OUT) -> dict[str, list[dict]]:
    import cv2
    import soundfile as sf

    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    image, audio, shapes, sounds = [], [], [], []
    for label, name, draw in (("苹果", "apple", draw_apple), ("太阳", "sun", draw_sun)):
        for i in range(24):  # 14 for training (upstream's 28 pairs), 10 unseen for the test split
            f = f"images/{name}_{i:02d}.png"
            cv2.imwrite(str(out / f), draw(i))
            image.append({"input": f, "modality": "vision", "target": label, "split": "train" if i < 14 else "test"})
    for label, kind in (("红圆", "circle"), ("蓝方", "square"), ("绿三角", "triangle")):
        for i in range(8):
            f = f"images/{kind}_{i:02d}.png"
            cv2.imwrite(str(out / f), draw_shape(kind, i))
            shapes.append({"input": f, "modality": "vision", "target": label, "split": "train" if i < 6 else "test"})
    for label, (train_f, test_f) in TONES.items():
        for split, freqs in (("train", train_f), ("test", test_f)):
            for f_hz in freqs:
                f = f"audio/tone_{f_hz}hz.wav"
                sf.write(out / f, tone(f_hz, f_hz), SR, subtype="PCM_16")
                audio.append({"input": f, "modality": "audio", "target": label, "split": split})
    for label, make, name in (("噪声", noise, "noise"), ("滑音", chirp, "chirp")):
        for i in range(6):
            f = f"audio/{name}_{i}.wav"
            sf.write(out / f, make(i), SR, subtype="PCM_16")
            sounds.append({"input": f, "modality": "audio", "target": label, "split": "train" if i < 4 else "test"})
    text = [{"input": a, "modality": "text", "target": b} for a, b in TEXT_PAIRS]
    (out / "text.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in TEXT_PAIRS), encoding="utf-8")
    manifests = {"image.jsonl": image, "audio.jsonl": audio, "demo.jsonl": image + shapes + audio + sounds + text}
    for name, rows in manifests.items():
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return manifests


EXPERIMENTS = {  # upstream's verification table (spec §7.5), each with a held-out split
    "text memorisation (--sample 10)": ("text.tsv", {"sample": 10, "epochs": 1500}),
    "image → label (28 pairs, apple/sun)": ("image.jsonl", {"epochs": 120}),
    "audio → label (低音/中音/高音)": ("audio.jsonl", {"epochs": 120}),
}
TABLE_ROWS = {  # how docs/results.md names each experiment, what upstream reported, what is held out
    "text memorisation (--sample 10)": (
        "text `--sample 10` (8 train / 1 val / 1 test pairs)",
        "loss 6.98 → 0.0001",
        None,
    ),
    "image → label (28 pairs, apple/sun)": (
        "image → label, 28 training pairs (14 apple → 苹果, 14 sun → 太阳)",
        'loss 3.00 → 1.01, "apple predicted correctly" on training images',
        "unseen images",
    ),
    "audio → label (低音/中音/高音)": (
        "audio → label, 低音/中音/高音 (8 training frequencies each)",
        '"高音" output; low/mid/high never separated',
        "unseen frequencies",
    ),
}


def run_experiments(out: Path, engines=("v22", "baseline")) -> dict:
    """Train every experiment with each engine (small preset, seed 0); figures on train and held-out."""
    import tempfile
    import time

    import torch

    from v22sdk.engine.config import preset
    from v22sdk.engine.pipeline import train_engine

    torch.set_num_threads(1)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for title, (data, opts) in EXPERIMENTS.items():
            for engine in engines:
                cfg = preset("small", engine=engine, epochs=opts["epochs"], seed=0)
                start = time.perf_counter()
                res = train_engine(out / data, cfg, Path(tmp) / "x.pt", sample=opts.get("sample"))
                m = res["metrics"]
                held = [m[k]["all"] for k in ("val", "test") if k in m and "all" in m[k]]
                n_held = sum(h["n"] for h in held)
                row = {
                    "engine": engine,
                    "parameters": m["parameters"],
                    "epochs": m["epochs"],
                    "final_loss": m["final_loss"],
                    "stopped_early": m["stopped_early"],
                    "train_exact": m["train"]["all"]["exact"],
                    "train_n": m["train"]["all"]["n"],
                    "heldout_exact": sum(h["exact"] * h["n"] for h in held) / max(n_held, 1),
                    "heldout_char": sum(h["char"] * h["n"] for h in held) / max(n_held, 1),
                    "heldout_n": n_held,
                    "seconds": round(time.perf_counter() - start, 1),
                    "safeguards": m["safeguards"],
                }
                results.setdefault(title, []).append(row)
                print(title, json.dumps(row, ensure_ascii=False), flush=True)
    return results


def verification_table(results: dict) -> dict:
    """docs/results.md's verification table from :func:`run_experiments`'s figures."""
    rows = []
    for title, runs in results.items():
        name, upstream, held_word = TABLE_ROWS[title]
        for k, r in enumerate(runs):
            held_ok = round(r["heldout_exact"] * r["heldout_n"])
            held = f"**{held_ok}/{r['heldout_n']}**" + (
                f" {held_word}" if held_word else f" (char {r['heldout_char']:.2f})"
            )
            rows.append(
                [
                    name if k == 0 else "",
                    upstream if k == 0 else "",
                    "V22" if r["engine"] == "v22" else r["engine"],
                    f"{r['parameters']:,}",
                    f"{r['epochs']}" + (" (auto-stop)" if r["stopped_early"] else ""),
                    f"{r['final_loss']:.1e}",
                    f"{round(r['train_exact'] * r['train_n'])}/{r['train_n']}",
                    held,
                ]
            )
    return {
        "columns": [
            "experiment",
            "upstream reported (spec §7.5)",
            "engine",
            "params",
            "epochs",
            "final train loss",
            "train exact",
            "**held-out exact**",
        ],
        "align": "lllrrrrr",
        "rows": rows,
    }


def verification_values(results: dict) -> dict[str, str]:
    out = {}
    for title, runs in results.items():
        key = EXPERIMENTS[title][0].split(".")[0]  # text / image / audio
        for r in runs:
            out[f"{key}.{r['engine']}.epochs"] = str(r["epochs"])
            out[f"{key}.{r['engine']}.final_loss"] = f"{r['final_loss']:.1e}"
            out[f"{key}.{r['engine']}.train"] = f"{round(r['train_exact'] * r['train_n'])} of {r['train_n']}"
            out[f"{key}.{r['engine']}.heldout"] = f"{round(r['heldout_exact'] * r['heldout_n'])} of {r['heldout_n']}"
    spikes = sum(r["safeguards"]["spikes"] for runs in results.values() for r in runs)
    rollbacks = sum(r["safeguards"]["rollbacks"] for runs in results.values() for r in runs)
    alarms = sum(r["safeguards"]["ac_alarms"] for runs in results.values() for r in runs)
    out["safeguards"] = f"{spikes} CE spikes, {rollbacks} NaN rollbacks, {alarms} ac alarms"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--train", action="store_true", help="also train a checkpoint on the demo set (small preset)")
    ap.add_argument("--checkpoint", "-c", type=Path, default=Path("demo.pt"), help="where --train writes it")
    ap.add_argument("--epochs", type=int, default=150)
    ap.add_argument(
        "--results",
        type=Path,
        default=None,
        help="run upstream's verification table (V22 and baseline) and write it as a result file here",
    )
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    with tempfile.TemporaryDirectory(prefix="make-demo-data-") as tmp:
        os.environ["V22SDK_CACHE"] = str(Path(tmp) / "cache")  # never the user's token cache
        _main(args)


def _main(args) -> None:
    manifests = generate(args.out)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(
        f"demo data: {sum(len(v) for k, v in manifests.items() if k == 'demo.jsonl')} examples, "
        f"{size / 1e6:.2f} MB in {args.out}"
    )
    if args.train:
        import torch

        from v22sdk.engine.config import preset
        from v22sdk.engine.pipeline import train_engine

        torch.set_num_threads(1)
        cfg = preset("small", epochs=args.epochs, seed=0)
        checkpoint = args.checkpoint
        res = train_engine(
            args.out / "demo.jsonl",
            cfg,
            checkpoint,
            val_frac=0.0,
            test_frac=0.1,
            log_path=checkpoint.with_suffix(".log.jsonl"),
            on_epoch=lambda h: print(f"epoch {h['epoch']}: loss {h['loss']:.4g}") if h["epoch"] % 10 == 0 else None,
            storage="float16",
        )
        m = res["metrics"]
        print(f"output vocabulary: {len(res['vocab'])} entries, embeddings from: {res['vocab'].source}")
        print(
            json.dumps(
                {k: m[k] for k in ("train", "test", "parameters", "final_loss", "epochs") if k in m},
                ensure_ascii=False,
                indent=1,
            )
        )
        from v22sdk.engine.pipeline import evaluate_checkpoint

        # the shipped file stores float16 weights: its own held-out figures, measured after reloading
        print(
            "reloaded (float16) test split:", json.dumps(evaluate_checkpoint(checkpoint)["metrics"], ensure_ascii=False)
        )
        print(f"checkpoint: {checkpoint} ({checkpoint.stat().st_size / 1e6:.2f} MB)")
    if args.results:
        from v22sdk.evidence import write_result

        results = run_experiments(args.out)
        write_result(
            args.results,
            results,
            tables={"verification": verification_table(results)},
            values=verification_values(results),
        )


if __name__ == "__main__":
    main()
