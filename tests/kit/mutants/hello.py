"""Mutants of the reference third-party plugin, ``hello`` (contrib/v22sdk-hello).

Its ``sample_inputs()`` draws float32 and int16 signals of 1..2000 samples at 100 Hz..48 kHz,
within full scale: everything else (float64, float16, int8/int32/int64, amplitudes beyond full
scale, rates above 48 kHz, long signals, other memory layouts, files) is a rare input for it.
"""

from __future__ import annotations

from . import ROOT, Mutant, Target, edit

TARGET = Target(
    name="hello",
    package="v22sdk_hello",
    folder=ROOT / "contrib" / "v22sdk-hello" / "v22sdk_hello",
    cls="v22sdk_hello.modality:HelloModality",
    configs=({}, {"frame_seconds": 0.2}),
)

M = "modality.py"
ENCODE = "    def encode(self, data: Any, *, sample_rate: float) -> Encoding:\n"
COLUMNS_LOOP = "        for slot, values in columns.items():\n            attr[:, SCHEMA.index(slot)] = values\n"
TIME = "        time = np.stack([starts / sample_rate, ends], axis=1)\n"
FLOAT_PATH = "    x = data.astype(np.float64)\n    bad = ~np.isfinite(x)\n"


def method(code: str) -> tuple:
    """An edit that adds a method (or class attribute) to HelloModality, just before encode."""
    return (edit(M, ENCODE, code + "\n" + ENCODE),)


MUTANTS: tuple[Mutant, ...] = (
    # -- finite --------------------------------------------------------------------------------
    Mutant(
        "zcr_no_guard",
        "check_finite",
        (
            edit(
                M,
                '"hello.shape.zcr": crossings / np.maximum(lengths - 1, 1),',
                '"hello.shape.zcr": crossings / (lengths - 1),',
            ),
        ),
        "a frame of one sample (a one-sample signal, or a last frame of one sample): 0/0",
    ),
    Mutant(
        "centroid_no_silence_guard",
        "check_finite",
        (
            edit(
                M,
                "centroid = np.where(silent | (total <= 0), 0.0, (power @ freq) / np.where(total > 0, total, 1.0))",
                "centroid = (power @ freq) / total",
            ),
        ),
        "a silent frame: 0/0",
    ),
    Mutant(
        "nan_check_float32_only",
        "check_input_spec",
        (
            edit(
                M,
                "    bad = ~np.isfinite(x)\n    if bad.any():",
                "    bad = ~np.isfinite(x)\n    if bad.any() and data.dtype == np.float32:",
            ),
        ),
        "NaN or inf in float64 or float16 samples pass into the tokens",
        rare=True,
    ),
    # -- unit norm -----------------------------------------------------------------------------
    Mutant(
        "emb_l1_norm",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "norm = np.linalg.norm(bands, axis=1, keepdims=True)",
                "norm = np.abs(bands).sum(axis=1, keepdims=True)",
            ),
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
                "",
            ),
        ),
        "every non-silent frame: the band vector is divided by its L1 norm, not its L2 norm",
    ),
    # -- attribute bounds ----------------------------------------------------------------------
    Mutant(
        "peak_unclipped",
        "check_attr_bounds",
        (
            edit(
                M,
                '"hello.level.peak": np.clip(np.abs(frames).max(axis=1), 0.0, 1.0),',
                '"hello.level.peak": np.abs(frames).max(axis=1),',
            ),
        ),
        "float samples beyond full scale (1 < |x| <= 1000), which the strategy never draws",
        rare=True,
    ),
    Mutant(
        "rms_db_floor_unclipped",
        "check_attr_bounds",
        (
            edit(
                M,
                '"hello.level.rms_db": np.clip(db / 30.0 + 1.0, -1.0, 1.0),',
                '"hello.level.rms_db": np.minimum(db / 30.0 + 1.0, 1.0),',
            ),
        ),
        "any frame quieter than -60 dBFS, silence included",
    ),
    Mutant(
        "centroid_off_by_one",
        "check_attr_bounds",
        (
            edit(
                M,
                "freq = np.arange(power.shape[1]) / max(power.shape[1] - 1, 1)",
                "freq = np.arange(power.shape[1]) / max(power.shape[1] - 2, 1)",
            ),
            edit(M, '"hello.spec.centroid": np.clip(centroid, 0.0, 1.0),', '"hello.spec.centroid": centroid,'),
        ),
        "a frame whose energy sits at the Nyquist frequency (an alternating signal)",
        rare=True,
    ),
    # -- declared slots ------------------------------------------------------------------------
    Mutant(
        "hires_flag_undeclared",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                COLUMNS_LOOP + "        if sample_rate > 96_000:  # hi-res audio\n            attr[:, 300] = 1.0\n",
            ),
        ),
        "sample rates above 96 kHz (the strategy draws up to 48 kHz)",
        rare=True,
    ),
    # -- shape and dtype -----------------------------------------------------------------------
    Mutant(
        "attr_follows_float_dtype",
        "check_shape_dtype",
        (
            edit(
                M,
                "attr = np.zeros((count, 384), dtype=np.float32)",
                "attr = np.zeros((count, 384), dtype=data.dtype if data.dtype.kind == 'f' else np.float32)",
            ),
        ),
        "float64 and float16 input (attr gets the input's dtype)",
        rare=True,
    ),
    Mutant(
        "frames_floor",
        "check_shape_dtype",
        (
            edit(M, "count = -(-n // size)", "count = n // size"),
            edit(M, "frames = np.zeros(count * size)\n        frames[:n] = x\n", "frames = x[: count * size].copy()\n"),
        ),
        "a signal shorter than one frame gives no token",
    ),
    # -- offsets -------------------------------------------------------------------------------
    Mutant(
        "padded_end",
        "check_offsets",
        (edit(M, "ends = (starts + lengths) / sample_rate", "ends = (starts + size) / sample_rate"),),
        "a signal whose length is not a multiple of the frame",
    ),
    Mutant(
        "inclusive_end",
        "check_offsets",
        (edit(M, "ends = (starts + lengths) / sample_rate", "ends = (starts + lengths - 1) / sample_rate"),),
        "a frame of one sample gets end == start",
    ),
    Mutant(
        "time_ms_ceil_long",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                TIME + "        if n > 20_000:  # long signals: whole milliseconds, never shorter than the frame\n"
                "            time = np.ceil(time * 1000.0) / 1000.0\n",
            ),
        ),
        "signals longer than 20000 samples (the strategy draws up to 2000): the last end rounds past the signal's end",
        rare=True,
    ),
    # -- determinism ---------------------------------------------------------------------------
    Mutant(
        "dither",
        "check_determinism",
        (
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
                "        emb = emb + np.random.default_rng().normal(0.0, 1e-6, emb.shape)\n"
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
            ),
        ),
        "every input: unseeded dither",
    ),
    Mutant(
        "clip_in_place_float64",
        "check_determinism",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = data if data.dtype == np.float64 else data.astype(np.float64)\n    bad = ~np.isfinite(x)\n",
            ),
            edit(
                M,
                "        x = as_signal(data)\n",
                "        x = as_signal(data)\n        np.clip(x, -1.0, 1.0, out=x)  # limit to full scale\n",
            ),
        ),
        "float64 input: clipped in the caller's own array (and a crash on a read-only one)",
        rare=True,
    ),
    # -- batches -------------------------------------------------------------------------------
    Mutant(
        "batch_concatenates",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # fast path: one signal, one FFT pass\n"
            "        samples = [i if isinstance(i, Sample) else Sample(i) for i in items]\n"
            "        if len({s.units.get('sample_rate') for s in samples}) == 1 and len(samples) > 1:\n"
            "            joined = np.concatenate([as_signal(s.data) for s in samples])\n"
            "            tokens = self.tokenize(joined, **samples[0].units)\n"
            "            counts = [-(-np.asarray(s.data).size // max(1, int(round(self.frame_seconds\n"
            "                      * samples[0].units['sample_rate'])))) for s in samples]\n"
            "            from v22sdk import TokenBatch\n"
            "            item = np.repeat(np.arange(len(samples)), counts)[: len(tokens)]\n"
            "            return TokenBatch(tokens.emb, tokens.attr, self.name, {**tokens.offsets, 'item': item})\n"
            "        return super().tokenize_batch(items)\n"
        ),
        "two or more signals of the same rate in one batch",
    ),
    # -- invalid inputs ------------------------------------------------------------------------
    Mutant(
        "empty_accepted",
        "check_invalid_inputs",
        (edit(M, '    if data.size == 0:\n        raise InputError(source, "the signal is empty")\n', ""),),
        "an empty signal gives zero tokens instead of an InputError",
    ),
    Mutant(
        "column_vector_accepted",
        "check_invalid_inputs",
        (
            edit(
                M,
                "    if data.ndim != 1:\n",
                "    if data.ndim == 2 and 1 in data.shape:\n        data = data.reshape(-1)\n    if data.ndim != 1:\n",
            ),
        ),
        "a (T, 1) or (1, T) array is read as mono instead of rejected",
    ),
    # -- config --------------------------------------------------------------------------------
    Mutant(
        "from_config_ignores_frame",
        "check_config_roundtrip",
        method("    @classmethod\n    def from_config(cls, config):\n        return cls()\n"),
        "only a configuration other than the default (frame_seconds=0.2)",
        rare=True,
    ),
    # -- fresh instances and processes ----------------------------------------------------------
    Mutant(
        "cache_keyed_on_shape",
        "check_fresh_process",
        (
            edit(
                M,
                "        x = as_signal(data)\n",
                "        key = (np.shape(data), str(getattr(data, 'dtype', '')), float(sample_rate), self.frame_seconds)\n"
                "        if key in _CACHE:  # tokenizing is pure, so cache it\n"
                "            return _CACHE[key]\n"
                "        _CACHE[key] = self._encode(data, sample_rate=sample_rate)\n"
                "        return _CACHE[key]\n\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n"
                "        x = as_signal(data)\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_CACHE: dict = {}\n'),
        ),
        "a second, different signal of the same length, dtype and rate (consistent within a process)",
    ),
    Mutant(
        "first_call_float32",
        "check_fresh_process",
        (
            edit(
                M,
                "        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2           # (N, size // 2 + 1)\n",
                "        first = not _WARM  # the first call warms up with a cheaper single-precision FFT\n"
                "        _WARM.append(True)\n"
                "        power = np.abs(np.fft.rfft(frames.astype(np.float32) if first else frames, axis=1)) ** 2\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_WARM: list = []\n'),
        ),
        "the first call in a process",
    ),
    # -- files ---------------------------------------------------------------------------------
    Mutant(
        "rate_from_file_name",
        "check_files",
        (
            edit(
                M,
                '        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate)}, str(path))\n',
                "        import re\n"
                "        named = re.search(r'(\\d+)\\s*hz', os.path.basename(str(path)).lower())\n"
                "        if named:  # recordings are often named by their rate\n"
                "            rate = int(named.group(1))\n"
                '        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate)}, str(path))\n',
            ),
        ),
        "a file whose name carries a rate",
        rare=True,
    ),
    Mutant(
        "rate_header_ignored",
        "check_files",
        (
            edit(
                M,
                '        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate)}, str(path))\n',
                '        return Sample(np.ascontiguousarray(mono), {"sample_rate": 16000.0}, str(path))  # our recorders\n',
            ),
        ),
        "any file not recorded at 16 kHz: the rate in the header is ignored",
        rare=True,
    ),
    Mutant(
        "empty_file_eof",
        "check_files",
        (
            edit(
                M,
                "        except (OSError, EOFError, wave.Error) as exc:",
                "        except (OSError, wave.Error) as exc:",
            ),
        ),
        "an empty file: EOFError escapes",
        rare=True,
    ),
    # -- controls: must survive ------------------------------------------------------------------
    Mutant(
        "ctl_no_float64_renorm",
        None,
        (
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
                "",
            ),
        ),
        "the embedding is already unit norm (orthonormal projection of a unit direction)",
    ),
    Mutant(
        "ctl_cache_keyed_on_data",
        None,
        (
            edit(
                M,
                "        x = as_signal(data)\n",
                "        import hashlib\n"
                "        if isinstance(data, np.ndarray):\n"
                "            key = (hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest(), data.dtype.str,\n"
                "                   data.shape, float(sample_rate), self.frame_seconds)\n"
                "            if key not in _CACHE:\n"
                "                _CACHE[key] = self._encode(data, sample_rate=sample_rate)\n"
                "            hit = _CACHE[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {k: v.copy() for k, v in hit.offsets.items()})\n"
                "        return self._encode(data, sample_rate=sample_rate)\n\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n"
                "        x = as_signal(data)\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_CACHE: dict = {}\n'),
        ),
        "a correct cache, keyed on the data's bytes, dtype, shape, rate and configuration",
    ),
    Mutant(
        "ctl_rejects_one_sample",
        None,
        (
            edit(
                M,
                '    if data.size == 0:\n        raise InputError(source, "the signal is empty")\n',
                '    if data.size < 2:\n        raise InputError(source, "a signal needs at least 2 samples")\n',
            ),
            edit(M, "n = draw(st.integers(1, 2000))", "n = draw(st.integers(2, 2000))"),
        ),
        "a stricter plugin: one-sample signals are refused with InputError (and not drawn)",
    ),
    Mutant(
        "ctl_batch_loop",
        None,
        method(
            "    def tokenize_batch(self, items):\n"
            "        from v22sdk import TokenBatch\n"
            "        if not items:\n"
            "            return super().tokenize_batch(items)\n"
            "        parts = [self.tokenize(i) for i in items]\n"
            "        joined = TokenBatch.concat(parts)\n"
            "        item = np.concatenate([np.full(len(p), k, dtype=np.int64) for k, p in enumerate(parts)])\n"
            "        return TokenBatch(joined.emb, joined.attr, self.name, {**joined.offsets, 'item': item})\n"
        ),
        "a hand-written tokenize_batch that gives the singles' tokens",
    ),
    Mutant(
        "ctl_collapsed_embedding",
        None,
        (
            edit(
                M,
                "        emb = direction @ q[:, :N_BANDS].T + silent[:, None] * q[:, N_BANDS]\n",
                "        emb = np.tile(q[:, N_BANDS], (count, 1))  # every frame the same vector\n",
            ),
        ),
        "contract-valid but uninformative: a quality warning, not a failure",
    ),
)

# -- held out: written after the kit's version-2 checks were frozen, committed before their first run --
HELD_OUT: tuple[Mutant, ...] = (
    Mutant(
        "dc_unclipped",
        "check_attr_bounds",
        (
            edit(
                M,
                '"hello.shape.dc": np.clip(frames.sum(axis=1) / lengths, -1.0, 1.0),',
                '"hello.shape.dc": frames.sum(axis=1) / lengths,',
            ),
        ),
        "float samples with a mean beyond full scale",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "zero_touch_crossings",
        "check_attr_bounds",
        (
            edit(
                M,
                "crossings = (frames[:, 1:] * frames[:, :-1] < 0).sum(axis=1)",
                "crossings = (frames[:, 1:] * frames[:, :-1] <= 0).sum(axis=1)",
            ),
        ),
        "a partial last frame: the zero padding counts as crossings, zcr above 1",
        held_out=True,
    ),
    Mutant(
        "missing_rate_defaults",
        "check_invalid_inputs",
        method(
            "    def check_units(self, units, source):\n"
            "        units = dict(units)\n"
            "        units.setdefault('sample_rate', 16000.0)  # the usual rate\n"
            "        return super().check_units(units, source)\n"
        ),
        "a signal without its sample rate is tokenized at a guessed 16 kHz",
        held_out=True,
    ),
    Mutant(
        "batch_item_all_zero",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        from v22sdk import TokenBatch\n"
            "        joined = TokenBatch.concat([self.tokenize(i) for i in items])\n"
            "        return TokenBatch(joined.emb, joined.attr, self.name,\n"
            "                          {**joined.offsets, 'item': np.zeros(len(joined), dtype=np.int64)})\n"
        ),
        "a batch of two or more signals: every token says it is from the first",
        held_out=True,
    ),
    Mutant(
        "cache_per_instance",
        "check_fresh_instance",
        (
            edit(
                M,
                "        x = as_signal(data)\n",
                "        key = (id(self), np.shape(data), str(getattr(data, 'dtype', '')), float(sample_rate))\n"
                "        if key not in _BY_INSTANCE:  # each instance remembers its last result per shape\n"
                "            _BY_INSTANCE[key] = self._encode(data, sample_rate=sample_rate)\n"
                "        return _BY_INSTANCE[key]\n\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n"
                "        x = as_signal(data)\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_BY_INSTANCE: dict = {}\n'),
        ),
        "a second, different signal of the same length given to the same instance",
        held_out=True,
    ),
    Mutant(
        "long_offsets_in_ms",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                TIME + "        if n > 20_000:  # long recordings: offsets in milliseconds\n"
                "            time = time * 1000.0\n",
            ),
        ),
        "signals longer than 20000 samples",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "bool_read_as_pcm",
        "check_input_spec",
        (
            edit(
                M,
                '    if data.dtype.kind not in "if":\n',
                '    if data.dtype.kind == "b":  # a gate signal: read it as 8-bit PCM\n'
                "        data = data.astype(np.int8)\n"
                '    if data.dtype.kind not in "if":\n',
            ),
        ),
        "a bool array, which the input spec does not declare, is accepted",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "band_matrix_size_limit",
        "check_edge_inputs",
        (
            edit(
                M,
                '    """(bins, 16) one-hot map from rfft bin to band, bands of equal width up to Nyquist."""\n',
                '    """(bins, 16) one-hot map from rfft bin to band, bands of equal width up to Nyquist."""\n'
                "    if bins > 8193:\n"
                '        raise ValueError(f"no band matrix for {bins} bins (frames up to 16384 samples)")\n',
            ),
        ),
        "frames longer than 16384 samples (above about 330 kHz at 0.05 s): a ValueError, not an InputError",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "pcm_minimum_clipped_in_place",
        "check_determinism",
        (
            edit(
                M,
                '    if data.dtype.kind == "i":\n        return data.astype',
                '    if data.dtype.kind == "i":\n'
                "        np.maximum(data, -np.iinfo(data.dtype).max, out=data)  # symmetric PCM\n"
                "        return data.astype",
            ),
        ),
        "integer samples at the dtype's minimum are changed in the caller's array; a read-only array crashes",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "ctl_float32_level",
        None,
        (
            edit(
                M,
                "rms = np.sqrt((frames ** 2).sum(axis=1) / lengths)",
                "rms = np.sqrt((frames.astype(np.float32) ** 2).sum(axis=1) / lengths).astype(np.float64)",
            ),
        ),
        "the level computed in single precision: other values, the same rules",
        held_out=True,
    ),
    Mutant(
        "ctl_accepts_unsigned_declared",
        None,
        (
            edit(
                M,
                'input_spec = InputSpec(kind="array", dtypes=("i", "f"), ndim=(1,),',
                'input_spec = InputSpec(kind="array", dtypes=("u", "i", "f"), ndim=(1,),',
            ),
            edit(
                M,
                '    if data.dtype.kind not in "if":\n',
                '    if data.dtype.kind == "u":  # unsigned PCM: zero at mid-scale\n'
                "        half = float(np.iinfo(data.dtype).max) / 2.0 + 0.5\n"
                "        return (data.astype(np.float64) - half) / half\n"
                '    if data.dtype.kind not in "if":\n',
            ),
        ),
        "unsigned PCM declared in the input spec and read correctly",
        held_out=True,
    ),
)

# -- held out, round 2: written after the first round's post-hoc fixes, committed with their
# criterion (scripts/mutation_score.py, CRITERION_2) before any run of the kit against them --
SIZE = "        size = max(1, int(round(self.frame_seconds * sample_rate)))\n"
RENORM = "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n"
HELD_OUT_2: tuple[Mutant, ...] = (
    Mutant(
        "long_emb_smoothed",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                RENORM + "        if n > 20_000:  # long recordings: smooth each embedding with its predecessor\n"
                "            emb[1:] = (emb[1:] + emb[:-1]) / 2.0\n",
            ),
        ),
        "signals longer than 20000 samples whose neighbouring frames differ: the mean of two unit vectors is shorter",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "position_of_padded_centre",
        "check_attr_bounds",
        (
            edit(
                M,
                '"hello.time.position": np.clip((starts / sample_rate + ends) / 2.0 / duration, 0.0, 1.0),',
                '"hello.time.position": (starts + size / 2.0) / n,',
            ),
        ),
        "a last frame less than half full: the centre of the zero-padded frame lies past the signal's end",
        held_out=True,
        round=2,
    ),
    Mutant(
        "hires_decimated_end",
        "check_offsets",
        (
            edit(
                M,
                "        x = as_signal(data)\n        n = x.size\n",
                "        x = as_signal(data)\n"
                "        if sample_rate > 96_000:  # hi-res: decimate by 2 first (the bands stop at 48 kHz anyway)\n"
                "            x = x[::2]\n"
                "            sample_rate = sample_rate / 2.0\n"
                "        n = x.size\n",
            ),
        ),
        "an odd number of samples above 96 kHz: the last end is one sample past the signal's end",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "single_frame_squeezed",
        "check_shape_dtype",
        (
            edit(
                M,
                '        return Encoding(emb.astype(np.float32), attr, {"time": time})\n',
                '        return Encoding(emb.astype(np.float32).squeeze(), attr, {"time": time})\n',
            ),
        ),
        "a signal of one frame: emb has shape (256,), not (1, 256)",
        held_out=True,
        round=2,
    ),
    Mutant(
        "float64_peak_normalised",
        "check_finite",
        (
            edit(
                M,
                "    return x\n\n\ndef _band_matrix",
                "    if data.dtype == np.float64:  # studio data: normalise to its peak\n"
                "        x = x / np.abs(x).max()\n"
                "    return x\n\n\ndef _band_matrix",
            ),
        ),
        "an all-zero float64 signal: 0/0 (the strategy draws float32 and int16 only)",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "band_matrix_scaled_in_place",
        "check_determinism",
        (
            edit(
                M,
                "def _band_matrix(bins: int) -> np.ndarray:\n",
                "@functools.cache\ndef _band_matrix(bins: int) -> np.ndarray:\n",
            ),
            edit(
                M,
                "        bands = np.log1p(power @ _band_matrix(power.shape[1]) / size)   # (N, 16)\n",
                "        weights = _band_matrix(power.shape[1])\n"
                "        weights /= size                                            # fold 1/size into the matrix\n"
                "        bands = np.log1p(power @ weights)                          # (N, 16)\n",
            ),
        ),
        "a second input with the same number of FFT bins: the cached matrix was divided again",
        held_out=True,
        round=2,
    ),
    Mutant(
        "batch_long_items_coarser",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # long recordings in a batch are framed twice as coarsely, to bound the batch's size\n"
            "        from v22sdk import TokenBatch\n"
            "        if not items:\n"
            "            return super().tokenize_batch(items)\n"
            "        coarse = attrs.evolve(self, frame_seconds=min(2.0 * self.frame_seconds, 10.0))\n"
            "        parts = [(coarse if np.size(getattr(i, 'data', i)) > 20_000 else self).tokenize(i) for i in items]\n"
            "        joined = TokenBatch.concat(parts)\n"
            "        item = np.concatenate([np.full(len(p), k, dtype=np.int64) for k, p in enumerate(parts)])\n"
            "        return TokenBatch(joined.emb, joined.attr, self.name, {**joined.offsets, 'item': item})\n"
        ),
        "a signal longer than 20000 samples in a batch",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "rate_just_above_max_clamped",
        "check_input_spec",
        method(
            "    def check_units(self, units, source):\n"
            "        units = dict(units)\n"
            "        rate = units.get('sample_rate')\n"
            "        if isinstance(rate, (int, float)) and 384_000.0 < rate <= 384_000.0 * 1.01:\n"
            "            units['sample_rate'] = 384_000.0  # a recorder's clock drift: take the maximum\n"
            "        return super().check_units(units, source)\n"
        ),
        "a sample rate up to 1 % above the declared maximum of 384 kHz is accepted (the strategy draws up to 48 kHz)",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "list_accepted",
        "check_invalid_inputs",
        (
            edit(
                M,
                "    if not isinstance(data, np.ndarray):\n",
                "    if isinstance(data, (list, tuple)):  # plain Python samples: read them as an array\n"
                "        data = np.asarray(data)\n"
                "    if not isinstance(data, np.ndarray):\n",
            ),
        ),
        "a list of samples (the plugin's own 'wrong_type' invalid input) is tokenized instead of refused",
        held_out=True,
        round=2,
    ),
    Mutant(
        "strided_frombuffer",
        "check_edge_inputs",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = np.frombuffer(data, dtype=data.dtype).astype(np.float64)  # read the samples' buffer directly\n"
                "    bad = ~np.isfinite(x)\n",
            ),
        ),
        "a strided (non-contiguous) float array: np.frombuffer raises ValueError, not InputError",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "frame_size_planned_once",
        "check_fresh_instance",
        (
            edit(
                M,
                SIZE,
                "        size = _PLAN.setdefault(id(self), max(1, int(round(self.frame_seconds * sample_rate))))  # plan once\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_PLAN: dict = {}\n'),
        ),
        "an instance used at one rate, then another: it keeps the first rate's frame size, a fresh one does not",
        held_out=True,
        round=2,
    ),
    Mutant(
        "config_float32_rounded",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        return {'frame_seconds': float(np.float32(self.frame_seconds))}  # single precision is plenty\n"
        ),
        "a rate where frame_seconds x rate is a half-integer (130 Hz at 0.05 s): the rebuilt modality's frame is a "
        "sample longer",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "ascii_file_name",
        "check_files",
        (
            edit(
                M,
                "        check_regular_file(path)  # a FIFO would block, /dev/zero never end\n",
                "        check_regular_file(path)  # a FIFO would block, /dev/zero never end\n"
                "        label = os.fspath(path).encode('ascii').decode()  # a plain name for messages\n",
            ),
            edit(
                M,
                'raise InputError(str(path), f"not a readable PCM WAV file: {exc}")',
                'raise InputError(label, f"not a readable PCM WAV file: {exc}")',
            ),
        ),
        "a file whose name is not ASCII: UnicodeEncodeError escapes load",
        rare=True,
        held_out=True,
        round=2,
    ),
    # -- controls, round 2 --
    Mutant(
        "ctl_band_matrix_cached",
        None,
        (
            edit(
                M,
                "def _band_matrix(bins: int) -> np.ndarray:\n",
                "@functools.cache\ndef _band_matrix(bins: int) -> np.ndarray:\n",
            ),
            edit(
                M,
                "    return np.eye(N_BANDS)[band]\n",
                "    matrix = np.eye(N_BANDS)[band]\n    matrix.flags.writeable = False  # cached: shared by every call\n"
                "    return matrix\n",
            ),
        ),
        "a correct cache of a pure function of the bin count, its result read-only",
        held_out=True,
        round=2,
    ),
    Mutant(
        "ctl_int_scale_ldexp",
        None,
        (
            edit(
                M,
                "        return data.astype(np.float64) / (float(np.iinfo(data.dtype).max) + 1.0)\n",
                "        return np.ldexp(data.astype(np.float64), -(8 * data.dtype.itemsize - 1))  # / 2**(bits-1), exact\n",
            ),
        ),
        "an equivalent refactor: PCM scaled by a power of two with ldexp, the same bits",
        held_out=True,
        round=2,
    ),
)

# -- held out, round 3: written while the kit is being changed to close round 2's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_3)
# before any run of the kit against them --
TRUNCATED = (
    "        if len(raw) != count * width * channels:\n"
    '            raise InputError(str(path), f"truncated: {len(raw)} bytes of sample data, header says "\n'
    '                                        f"{count * width * channels}")\n'
)
HUGE = (
    "    if np.abs(x).max() > MAX_FLOAT_AMPLITUDE:\n"
    '        raise InputError(source, f"float samples must be full scale ±1 (found {np.abs(x).max():g}); "\n'
    '                                 f"values beyond ±{MAX_FLOAT_AMPLITUDE:g} are not a signal")\n'
)
HELD_OUT_3: tuple[Mutant, ...] = (
    Mutant(
        "long_emb_chunks_drop_tail",
        "check_shape_dtype",
        (
            edit(
                M,
                RENORM,
                RENORM
                + "        if count > 4096:  # long signals: cast in chunks of 4096 frames (bounds the float32 copy)\n"
                "            emb = np.concatenate([emb[i : i + 4096].astype(np.float32) for i in range(0, count - 4096 + 1, 4096)])\n",
            ),
        ),
        "a signal of more than 4096 frames, not a whole number of 4096-frame chunks (30000 samples at 100 Hz: 6000 "
        "frames): emb keeps 4096 rows, attr 6000",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "rms_about_the_mean",
        "check_finite",
        (
            edit(
                M,
                "rms = np.sqrt((frames ** 2).sum(axis=1) / lengths)",
                "rms = np.sqrt((frames ** 2).sum(axis=1) / lengths - (frames.sum(axis=1) / lengths) ** 2)  # DC has its own slot",
            ),
        ),
        "a frame of one repeated non-zero value, for some values (1000 float64 samples of 0.9 at 16 kHz; float32 0.7 at "
        "16 kHz with frame_seconds 0.2): mean(x^2) - mean(x)^2 rounds below 0, its square root is NaN (none of 300 "
        "drawn sample inputs per configuration showed it)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "unsigned_pcm_accepted",
        "check_input_spec",
        (
            edit(
                M,
                '    if data.dtype.kind not in "if":\n',
                '    if data.dtype.kind == "u":  # unsigned PCM, as 8-bit WAV stores it: zero at mid-scale\n'
                "        half = (int(np.iinfo(data.dtype).max) + 1) // 2\n"
                '        data = (data.astype(np.int64) - half).astype(np.dtype(f"i{data.dtype.itemsize}"))\n'
                '    if data.dtype.kind not in "if":\n',
            ),
        ),
        "unsigned integer samples (uint8 ... uint64), a dtype kind the input spec does not declare, are tokenized",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "projection_seed_from_hash",
        "check_fresh_process",
        (
            edit(
                M,
                "np.random.default_rng(SEED).standard_normal((256, N_BANDS + 1))",
                'np.random.default_rng(abs(hash(("hello", SEED)))).standard_normal((256, N_BANDS + 1))',
            ),
        ),
        "every input: the projection's seed is a string hash, which Python randomises per process (consistent within one)",
        held_out=True,
        round=3,
    ),
    Mutant(
        "batch_float64_downcast",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # a batch is computed in single precision: float64 signals are cast first, to halve its memory\n"
            "        def single(item):\n"
            "            s = item if isinstance(item, Sample) else Sample(item)\n"
            "            data = s.data.astype(np.float32) if getattr(s.data, 'dtype', None) == np.float64 else s.data\n"
            "            return Sample(data, s.units, s.source)\n"
            "        return super().tokenize_batch([single(i) for i in items])\n"
        ),
        "a float64 signal in a batch (the strategy draws float32 and int16): its samples are rounded to float32",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "int8_dithered",
        "check_determinism",
        (
            edit(
                M,
                "        x = as_signal(data)\n        n = x.size\n",
                "        x = as_signal(data)\n"
                "        if getattr(data, 'dtype', None) == np.int8:  # 8-bit PCM: dither away its quantisation steps\n"
                "            x = x + np.random.default_rng().uniform(-0.5, 0.5, x.size) / 128.0\n"
                "        n = x.size\n",
            ),
        ),
        "int8 samples (never drawn): unseeded dither, two calls give different tokens",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "wide_pcm_offsets_in_samples",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                TIME
                + '        if data.dtype.kind == "i" and data.dtype.itemsize >= 4:  # 32/64-bit PCM: offsets in samples\n'
                "            time = time * sample_rate\n",
            ),
        ),
        "int32 or int64 samples (the strategy draws int16): each end lies far past the signal's end",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "huge_amplitude_clipped",
        "check_invalid_inputs",
        (
            edit(
                M, HUGE, "    x = np.clip(x, -MAX_FLOAT_AMPLITUDE, MAX_FLOAT_AMPLITUDE)  # a hot recording: limit it\n"
            ),
        ),
        "float samples beyond ±1000 (the plugin's own 'out_of_range' case, 1e6) are limited and tokenized, not refused",
        held_out=True,
        round=3,
    ),
    Mutant(
        "int16_bytes_read_as_native",
        "check_edge_inputs",
        (
            edit(
                M,
                '    if data.dtype.kind == "i":\n        return data.astype',
                '    if data.dtype.kind == "i" and data.dtype.itemsize == 2:  # 16-bit PCM fast path: the raw samples\n'
                "        return np.frombuffer(data.tobytes(), dtype=np.int16) / 32768.0\n"
                '    if data.dtype.kind == "i":\n        return data.astype',
            ),
        ),
        "int16 samples in non-native byte order ('>i2' on a little-endian machine) are read byte-swapped: other tokens "
        "than the same values in native order",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "load_cached_by_path",
        "check_files",
        (
            edit(
                M,
                "        check_regular_file(path)  # a FIFO would block, /dev/zero never end\n",
                "        key = os.path.abspath(os.fspath(path))\n"
                "        if key not in _LOADED:  # a file is read once\n"
                "            _LOADED[key] = self._load(path)\n"
                "        return _LOADED[key]\n\n"
                "    def _load(self, path: str | os.PathLike[str]) -> Sample:\n"
                "        check_regular_file(path)  # a FIFO would block, /dev/zero never end\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_LOADED: dict = {}\n'),
        ),
        "a path written again with other content: load returns the first content (and a deleted file still loads)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "truncation_unchecked",
        "check_files",
        (edit(M, TRUNCATED, ""),),
        "a WAV cut inside its samples at an odd number of data bytes: np.frombuffer raises ValueError, not InputError",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "overload_flag_undeclared",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                COLUMNS_LOOP + "        attr[:, 262] = np.abs(frames).max(axis=1) > 1.0  # overload: the frame clips\n",
            ),
        ),
        "float samples beyond full scale (1 < |x| <= 1000): slot 262, which no schema declares, is set to 1",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "partial_frame_emb_weighted",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                RENORM + "        emb *= np.sqrt(lengths / size)[:, None]  # a partial last frame counts for less\n",
            ),
        ),
        "a signal whose length is not a whole number of frames: the last embedding is shorter than 1",
        held_out=True,
        round=3,
    ),
    # -- controls, round 3 --
    Mutant(
        "ctl_power_from_parts",
        None,
        (
            edit(
                M,
                "        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2           # (N, size // 2 + 1)\n",
                "        spectrum = np.fft.rfft(frames, axis=1)\n"
                "        power = spectrum.real ** 2 + spectrum.imag ** 2             # (N, size // 2 + 1)\n",
            ),
        ),
        "a refactor: the power spectrum as re^2 + im^2 (last bits may differ, every rule kept)",
        held_out=True,
        round=3,
    ),
    Mutant(
        "ctl_refuses_int64",
        None,
        (
            edit(
                M,
                "    if data.size == 0:\n",
                '    if data.dtype.kind == "i" and data.dtype.itemsize == 8:\n'
                '        raise InputError(source, "64-bit integer samples are not supported; use int16 or int32 PCM")\n'
                "    if data.size == 0:\n",
            ),
        ),
        "a stricter plugin: int64 samples refused with InputError in any byte order (int8/16/32 still taken)",
        held_out=True,
        round=3,
    ),
)

# -- held out, round 4: written while the kit is being changed to close round 3's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_4)
# before any run of any kit against them --
RETURN = '        return Encoding(emb.astype(np.float32), attr, {"time": time})\n'
KIND_CHECK = '    if data.dtype.kind not in "if":\n'
LOAD_START = "        check_regular_file(path)  # a FIFO would block, /dev/zero never end\n"
HELD_OUT_4: tuple[Mutant, ...] = (
    Mutant(
        "silence_by_exact_zero_power",
        "check_finite",
        (
            edit(
                M,
                "        silent = norm[:, 0] <= SILENCE\n",
                "        silent = power.sum(axis=1) == 0.0                          # silence: no power at all\n",
            ),
        ),
        "a frame so quiet that the squares of its band energies underflow (800 float64 samples of 1e-100 at 16 kHz): "
        "the band norm is 0 but the power is not, so the bands are divided by 0 and the embedding is not finite",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "rms_db_ceiling_dropped",
        "check_attr_bounds",
        (
            edit(
                M,
                '"hello.level.rms_db": np.clip(db / 30.0 + 1.0, -1.0, 1.0),',
                '"hello.level.rms_db": np.maximum(db / 30.0 + 1.0, -1.0),  # rms <= full scale, so db <= 0',
            ),
        ),
        "float samples whose frame RMS is beyond full scale (a float32 signal of 2.0): rms_db above 1",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "silent_frames_dropped",
        "check_shape_dtype",
        (
            edit(
                M,
                RETURN,
                "        keep = ~silent  # silent frames say nothing: no token for them\n"
                '        return Encoding(emb.astype(np.float32)[keep], attr[keep], {"time": time[keep]})\n',
            ),
        ),
        "an all-silent signal (zeros, float32 or int16): no token at all for a valid input",
        held_out=True,
        round=4,
    ),
    Mutant(
        "long_time_float32",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                TIME + "        if n > 65_536:  # long recordings: offsets in single precision, half the memory\n"
                "            time = time.astype(np.float32)\n",
            ),
        ),
        "a signal of more than 65536 samples whose duration rounds up in float32 (100001 samples at 44.1 kHz): the "
        "last end lies after the signal's end",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "byteswapped_in_place",
        "check_determinism",
        (
            edit(
                M,
                KIND_CHECK,
                "    if not data.dtype.isnative:  # network byte order: swap to native in place (no copy of a long signal)\n"
                "        data = data.byteswap(inplace=True).view(data.dtype.newbyteorder())\n" + KIND_CHECK,
            ),
        ),
        "samples in non-native byte order ('>i2', '>f4' on a little-endian machine): the caller's array is byte-swapped, "
        "so a second call reads other values (a read-only one raises TypeError)",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "batch_cast_to_first_dtype",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # one batch, one dtype: every signal is converted to the first one's (a batch is one array)\n"
            "        samples = [i if isinstance(i, Sample) else Sample(i) for i in items]\n"
            "        first = getattr(samples[0].data, 'dtype', None) if samples else None\n"
            "        if first is not None:\n"
            "            samples = [Sample(s.data.astype(first), s.units, s.source) if isinstance(s.data, np.ndarray) else s\n"
            "                       for s in samples]\n"
            "        return super().tokenize_batch(samples)\n"
        ),
        "a batch of a float32 and an int16 signal: the second is cast to the first's dtype (float32 samples in [-1, 1] "
        "become int16 0 and ±1; int16 PCM becomes float32 thousands, refused)",
        held_out=True,
        round=4,
    ),
    Mutant(
        "complex_magnitude_taken",
        "check_invalid_inputs",
        (
            edit(
                M,
                KIND_CHECK,
                '    if data.dtype.kind == "c":  # IQ samples from a radio: their magnitude is the signal\n'
                "        data = np.abs(data)\n" + KIND_CHECK,
            ),
        ),
        "complex samples (the default 'wrong_dtype' invalid input, complex64) are tokenized as their magnitude",
        held_out=True,
        round=4,
    ),
    Mutant(
        "text_samples_parsed",
        "check_input_spec",
        (
            edit(
                M,
                KIND_CHECK,
                '    if data.dtype.kind in "US":  # samples read from a CSV column arrive as text\n'
                "        data = data.astype(np.float64)\n" + KIND_CHECK,
            ),
        ),
        "an array of strings (dtype kind 'U' or 'S', which the input spec does not declare): numeric text is "
        "tokenized, other text raises ValueError",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "unknown_units_ignored",
        "check_input_spec",
        method(
            "    def check_units(self, units, source):\n"
            "        # units come from metadata dicts with more in them (channels, bit depth ...): keep ours\n"
            "        known = {u.name for u in self.input_spec.units}\n"
            "        return super().check_units({k: v for k, v in units.items() if k in known}, source)\n"
        ),
        "a unit the input spec does not declare (sample_rate and channels=2) is dropped instead of refused",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "config_version_tuple",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        return {'frame_seconds': self.frame_seconds, 'version': (0, 1)}  # record the tokenizer's version\n\n"
            "    @classmethod\n"
            "    def from_config(cls, config):\n"
            "        config = dict(config)\n"
            "        config.pop('version', None)\n"
            "        return cls(**config)\n"
        ),
        "every configuration: config() holds a tuple, which a JSON round trip turns into a list",
        held_out=True,
        round=4,
    ),
    Mutant(
        "first_input_calibrates",
        "check_fresh_instance",
        (
            edit(
                M,
                "        db = 20.0 * np.log10(np.maximum(rms, 1e-30))\n",
                "        db = 20.0 * np.log10(np.maximum(rms, 1e-30))\n"
                "        db = db - _CALIBRATION.setdefault(id(self), float(db.max()) if db.max() > -60 else 0.0)  # the first "
                "signal an instance hears sets its 0 dB\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_CALIBRATION: dict = {}\n'),
        ),
        "an instance that has heard another signal first (a tone at 0.5 full scale, then one at 0.1): its rms_db "
        "differs from a fresh instance's",
        held_out=True,
        round=4,
    ),
    Mutant(
        "wav_suffix_case_sensitive",
        "check_files",
        (
            edit(
                M,
                LOAD_START,
                LOAD_START + "        if not os.fspath(path).endswith('.wav'):\n"
                '            raise InputError(str(path), "not a .wav file")\n',
            ),
        ),
        "the same WAV bytes under an upper-case '.WAV' (or any other) name are refused",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "size_checked_before_existence",
        "check_files",
        (
            edit(
                M,
                LOAD_START,
                "        if os.path.getsize(path) < 44:  # shorter than a WAV header\n"
                '            raise InputError(str(path), "too short for a WAV file")\n' + LOAD_START,
            ),
        ),
        "a missing file: os.path.getsize raises FileNotFoundError, not InputError",
        rare=True,
        held_out=True,
        round=4,
    ),
    # -- controls, round 4 --
    Mutant(
        "ctl_hann_window",
        None,
        (
            edit(
                M,
                "        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2           # (N, size // 2 + 1)\n",
                "        window = np.hanning(size) if size > 2 else np.ones(size)   # less leakage between bands\n"
                "        power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # (N, size // 2 + 1)\n",
            ),
        ),
        "a DSP change: a Hann window before the FFT (other band energies, every rule kept)",
        held_out=True,
        round=4,
    ),
    Mutant(
        "ctl_config_omits_defaults",
        None,
        method(
            "    def config(self):\n"
            "        # only what differs from the defaults (from_config fills in the rest)\n"
            "        return {k: v for k, v in super().config().items() if v != attrs.fields_dict(type(self))[k].default}\n"
        ),
        "a shorter config: fields at their default are left out, from_config rebuilds the same modality",
        held_out=True,
        round=4,
    ),
)

# -- held out, round 5: written while the kit is being changed to close round 4's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_5)
# before any run of any kit against them --
AMPLITUDE = "    if np.abs(x).max() > MAX_FLOAT_AMPLITUDE:\n"
SHAPE_CHECKS = "    if data.ndim != 1:\n"
HELD_OUT_5: tuple[Mutant, ...] = (
    Mutant(
        "amplitude_checked_on_max_only",
        "check_finite",
        (
            edit(
                M,
                AMPLITUDE
                + '        raise InputError(source, f"float samples must be full scale ±1 (found {np.abs(x).max():g}); "\n',
                "    if x.max() > MAX_FLOAT_AMPLITUDE:  # the loudest sample\n"
                '        raise InputError(source, f"float samples must be full scale ±1 (found {np.abs(x).max():g}); "\n',
            ),
        ),
        "float64 samples far below -1000 (-1e200): accepted, their squares overflow, the embedding and rms_db are "
        "not finite",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "long_emb_float16",
        "check_shape_dtype",
        (
            edit(
                M,
                RETURN,
                "        if count > 4096:  # long recordings: half-precision embeddings, a quarter of the memory\n"
                '            return Encoding(emb.astype(np.float16), attr, {"time": time})\n' + RETURN,
            ),
        ),
        "a signal of more than 4096 frames (20481 samples at 100 Hz): emb is float16, not float32",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "renorm_over_frames",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)",
                "        emb /= np.linalg.norm(emb, axis=0, keepdims=True)",
            ),
        ),
        "any signal of two frames or more (the renormalisation runs over the wrong axis)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "position_over_last_sample_time",
        "check_attr_bounds",
        (
            edit(
                M,
                "        duration = n / sample_rate\n",
                "        duration = max(n - 1, 1) / sample_rate  # time of the last sample\n",
            ),
            edit(
                M,
                '"hello.time.position": np.clip((starts / sample_rate + ends) / 2.0 / duration, 0.0, 1.0),',
                '"hello.time.position": (starts / sample_rate + ends) / 2.0 / duration,',
            ),
        ),
        "a signal whose last frame holds one sample (n = k * frame + 1, k >= 1; 801 samples at 16 kHz): its centre "
        "lies after the last sample's time, position above 1",
        held_out=True,
        round=5,
    ),
    Mutant(
        "pcm_bit_depth_undeclared",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                COLUMNS_LOOP
                + "        if data.dtype.kind == 'i' and data.dtype.itemsize > 2:  # 24/32-bit sources: note the depth\n"
                "            attr[:, 383] = data.dtype.itemsize * 8 / 64\n",
            ),
        ),
        "int32 or int64 samples (the strategy draws int16): slot 383, which no schema declares, is set",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "starts_at_nominal_frame_time",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                "        time = np.stack([np.arange(count) * self.frame_seconds, ends], axis=1)  # frame k starts at k * "
                "frame_seconds\n",
            ),
        ),
        "a rate at which the frame rounds to fewer samples than frame_seconds x rate, with many frames (3000 "
        "samples at 130 Hz, frame 6 samples): late frames start after they end",
        held_out=True,
        round=5,
    ),
    Mutant(
        "frames_buffer_uninitialised",
        "check_determinism",
        (
            edit(
                M,
                "        frames = np.zeros(count * size)\n",
                "        frames = np.empty(count * size)  # filled just below\n",
            ),
        ),
        "a signal whose length is not a whole number of frames: the last frame's padding is uninitialised memory "
        "(two calls give different tokens when other arrays were freed in between)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "config_extra_key",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        # record the frame in samples at 16 kHz too, for people reading the config\n"
            "        return {'frame_seconds': self.frame_seconds, 'frame_samples_16k': round(self.frame_seconds * 16000)}\n"
        ),
        "every configuration: from_config(config()) raises TypeError (an unexpected keyword)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "rate_capped_at_192k",
        "check_input_spec",
        (
            edit(
                M,
                "        x = as_signal(data)\n        n = x.size\n",
                "        if sample_rate > 192_000.0:  # no converter samples faster\n"
                '            raise InputError(SOURCE, f"sample_rate {sample_rate} Hz is above 192 kHz")\n'
                "        x = as_signal(data)\n        n = x.size\n",
            ),
        ),
        "a sample rate between 192 kHz and the declared maximum of 384 kHz (the strategy draws up to 48 kHz): a valid "
        "input refused",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "scalar_promoted",
        "check_input_spec",
        (
            edit(
                M,
                SHAPE_CHECKS,
                "    if data.ndim == 0:  # a single sample given as a numpy scalar\n"
                "        data = data.reshape(1)\n" + SHAPE_CHECKS,
            ),
        ),
        "a 0-d array (np.array(0.5)), a rank the input spec does not declare, is tokenized as a one-sample signal",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "long_signal_value_error",
        "check_edge_inputs",
        (
            edit(
                M,
                "        x = as_signal(data)\n        n = x.size\n",
                "        x = as_signal(data)\n        n = x.size\n"
                "        if n / sample_rate > 600.0:  # guard: more than ten minutes\n"
                '            raise ValueError(f"signal too long: {n / sample_rate:.0f} s")\n',
            ),
        ),
        "a valid signal longer than ten minutes (60001 samples at 100 Hz): ValueError, not InputError or tokens",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "cache_keyed_on_head_bytes",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                ENCODE + "        if isinstance(data, np.ndarray):\n"
                "            # a fingerprint of the first 4 KiB is plenty to tell signals apart\n"
                "            key = (data.shape, data.dtype.str, bytes(np.ascontiguousarray(data).data)[:4096], sample_rate, "
                "self.frame_seconds)\n"
                "            if key not in _HEADS:\n"
                "                _HEADS[key] = self._encode(data, sample_rate=sample_rate)\n"
                "            hit = _HEADS[key]\n"
                '            return Encoding(hit.emb.copy(), hit.attr.copy(), {"time": hit.offsets["time"].copy()})\n'
                "        return self._encode(data, sample_rate=sample_rate)\n\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
            edit(M, 'SOURCE = "<hello signal>"\n', 'SOURCE = "<hello signal>"\n_HEADS: dict = {}\n'),
        ),
        "two signals of one length, dtype and rate that agree in their first 4096 bytes and differ after (2000 float32 "
        "samples: zeros, then zeros with sample 1500 = 0.5): the second gets the first's tokens (consistent within a "
        "process)",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "save_rounds_rate",
        "check_files",
        (
            edit(
                M,
                "        if not (rate.is_integer() and 1 <= rate < 2 ** 31):\n",
                "        rate = float(round(rate))  # a WAV header holds whole samples per second\n"
                "        if not (rate.is_integer() and 1 <= rate < 2 ** 31):\n",
            ),
        ),
        "a signal saved at a fractional rate (8000.5 Hz): written, not refused, and load reads back another rate "
        "(8000 Hz)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "ultrasonic_band_projected_out",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n"
                "        if sample_rate > 96_000.0:  # the top band is ultrasonic there: take it out of the embedding\n"
                "            emb = emb - np.outer(direction[:, N_BANDS - 1], q[:, N_BANDS - 1])\n",
            ),
        ),
        "a sample rate above 96 kHz (the strategy draws up to 48 kHz), any non-silent frame (noise at 192 kHz): the "
        "embedding loses its top-band component and is shorter than 1",
        rare=True,
        held_out=True,
        round=5,
    ),
    # -- controls, round 5 --
    Mutant(
        "ctl_band_matrix_by_digitize",
        None,
        (
            edit(
                M,
                "    band = np.minimum((frac * N_BANDS).astype(np.int64), N_BANDS - 1)\n",
                "    band = np.minimum(np.floor(frac * N_BANDS).astype(np.int64), N_BANDS - 1)  # frac >= 0: the same\n",
            ),
        ),
        "a refactor: the band index by an explicit floor (frac is never negative, so the same bands)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "ctl_rms_by_mean_square",
        None,
        (
            edit(
                M,
                "        rms = np.sqrt((frames ** 2).sum(axis=1) / lengths)\n",
                "        rms = np.sqrt(np.einsum('ij,ij->i', frames, frames) / lengths)  # one pass, no temporary\n",
            ),
        ),
        "a refactor: the sum of squares by einsum (last bits may differ, every rule kept)",
        held_out=True,
        round=5,
    ),
)

# -- held out, round 6: written while the kit is being changed to close round 5's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_6)
# before any run of any kit against them --
SIGNAL = "        x = as_signal(data)\n        n = x.size\n"
SOURCE_LINE = 'SOURCE = "<hello signal>"\n'
HELD_OUT_6: tuple[Mutant, ...] = (
    Mutant(
        "time_rounded_to_ms",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                "        time = np.round(np.stack([starts / sample_rate, ends], axis=1), 3)  # millisecond resolution\n",
            ),
        ),
        "a signal whose duration is not a whole number of milliseconds and rounds up (1999 samples at 16 kHz, "
        "duration 0.1249375 s): the last frame ends at 0.125 s, after the signal",
        held_out=True,
        round=6,
    ),
    Mutant(
        "centroid_over_24k",
        "check_attr_bounds",
        (
            edit(
                M,
                "        freq = np.arange(power.shape[1]) / max(power.shape[1] - 1, 1)\n",
                "        freq = np.fft.rfftfreq(size, 1.0 / sample_rate) / 24_000.0  # Hz over the Nyquist of 48 kHz audio\n",
            ),
            edit(
                M,
                '"hello.spec.centroid": np.clip(centroid, 0.0, 1.0),',
                '"hello.spec.centroid": centroid,  # a mean frequency over 24 kHz: in [0, 1] already',
            ),
        ),
        "a sample rate above 48 kHz (the strategy draws up to 48 kHz) with energy above 24 kHz (white noise at "
        "192 kHz): the centroid slot is above 1",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "offset_signal_first_dim_zeroed",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n",
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast\n"
                "        if abs(x.mean()) > 0.5:  # a strongly offset signal: its DC direction carries no information\n"
                "            emb[:, 0] = 0.0\n",
            ),
        ),
        "a signal with a DC offset above 0.5 full scale (a constant 0.9, 1000 float32 samples at 16 kHz; the "
        "strategy's tones, noise and PCM are centred): the embedding loses a component and is shorter than 1",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "columns_off_by_one_slot",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                "        for slot, values in columns.items():\n"
                "            attr[:, SCHEMA.index(slot) + 1] = values  # slot 256 is the zone's marker\n",
            ),
        ),
        "every signal: the position is written one slot past the schema's last (slot 262, undeclared)",
        held_out=True,
        round=6,
    ),
    Mutant(
        "long_attr_float64",
        "check_shape_dtype",
        (
            edit(
                M,
                "        attr = np.zeros((count, 384), dtype=np.float32)\n",
                "        attr = np.zeros((count, 384), dtype=np.float64 if n > 65_536 else np.float32)  # long: precision\n",
            ),
        ),
        "a signal of more than 65536 samples (100000 samples at 16 kHz; the strategy draws at most 2000): attr is "
        "float64, not float32",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "dc_removed_in_callers_float64",
        "check_determinism",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = data.astype(np.float64, copy=False)  # float64 already: no copy\n    bad = ~np.isfinite(x)\n",
            ),
            edit(
                M,
                SIGNAL,
                "        x = as_signal(data)\n        x -= x.mean()  # remove the DC offset before framing\n        n = x.size\n",
            ),
        ),
        "a float64 signal with a non-zero mean (500 samples of 0.25 + a 440 Hz tone at 0.5, 8 kHz; the strategy draws "
        "float32 and int16): the caller's array is changed by encode",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "batch_sorted_by_length",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        from v22sdk import TokenBatch\n\n"
            "        if not items:\n"
            "            return super().tokenize_batch(items)\n"
            "        # shortest first: frames of similar lengths reuse one FFT plan\n"
            "        order = sorted(range(len(items)), key=lambda k: np.size(getattr(items[k], 'data', items[k])))\n"
            "        singles = [self.tokenize(items[k]) for k in order]\n"
            "        batch = TokenBatch.concat(singles)\n"
            "        item = np.repeat(np.array(order, dtype=np.int64), [len(b) for b in singles])\n"
            "        return TokenBatch(emb=batch.emb, attr=batch.attr, modality=self.name,\n"
            "                          offsets={**batch.offsets, 'item': item}, source=None)\n"
        ),
        "a batch whose items are not in order of length (2000 then 100 samples at 8 kHz): the tokens come shortest "
        "first, not in the order of the items",
        held_out=True,
        round=6,
    ),
    Mutant(
        "amplitude_limit_1e6",
        "check_invalid_inputs",
        (
            edit(
                M,
                "MAX_FLOAT_AMPLITUDE = 1e3\n",
                "MAX_FLOAT_AMPLITUDE = 1e6  # headroom for float PCM never normalised\n",
            ),
        ),
        "every valid input: the plugin's own 'out_of_range' case (float64 samples of 1e6) is tokenized, not refused",
        held_out=True,
        round=6,
    ),
    Mutant(
        "config_frame_as_text",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        return {'frame_seconds': f'{self.frame_seconds:g}'}  # as written on the command line\n"
        ),
        "every configuration: from_config(config()) raises ValueError (frame_seconds is a string)",
        held_out=True,
        round=6,
    ),
    Mutant(
        "object_array_accepted",
        "check_input_spec",
        (
            edit(
                M,
                KIND_CHECK,
                "    if data.dtype == object:  # np.array of a list of mixed Python numbers\n"
                "        data = data.astype(np.float64)\n" + KIND_CHECK,
            ),
        ),
        "an object array of numbers (np.array([0.1, 0.2, 0.3], dtype=object)), a dtype kind the input spec does not "
        "declare, is tokenized",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "hi_rate_decimated_by_reshape",
        "check_edge_inputs",
        (
            edit(
                M,
                SIGNAL,
                "        x = as_signal(data)\n"
                "        if sample_rate > 96_000.0:  # beyond audio: halve the rate by averaging sample pairs\n"
                "            x = x.reshape(-1, 2).mean(axis=1)\n"
                "            sample_rate /= 2.0\n"
                "        n = x.size\n",
            ),
        ),
        "a rate above 96 kHz (the strategy draws up to 48 kHz) and an odd number of samples (1001 samples at 192 kHz): "
        "ValueError from reshape, not tokens or InputError",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "memo_by_array_identity",
        "check_fresh_instance",
        (
            edit(
                M,
                ENCODE,
                ENCODE + "        key = (id(self), id(data), sample_rate)\n"
                "        if key not in _LAST:  # the same buffer again (a caller re-tokenizing it): reuse\n"
                "            _LAST[key] = self._encode(data, sample_rate=sample_rate)\n"
                "        hit = _LAST[key]\n"
                '        return Encoding(hit.emb.copy(), hit.attr.copy(), {"time": hit.offsets["time"].copy()})\n\n'
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + "_LAST: dict = {}\n"),
        ),
        "an instance given one array twice with other samples written into it in between (500 float32 zeros at 8 kHz, "
        "then the same array filled with noise), or a new array at a freed one's address: it returns the old tokens, "
        "a fresh instance does not",
        held_out=True,
        round=6,
    ),
    Mutant(
        "cache_keyed_on_range",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                ENCODE
                + '        if isinstance(data, np.ndarray) and data.ndim == 1 and data.size and data.dtype.kind in "if":\n'
                "            # signals of one length, rate and range are re-recordings of one take\n"
                "            key = (data.shape, data.dtype.str, float(data.min()), float(data.max()), sample_rate, "
                "self.frame_seconds)\n"
                "            if key not in _BY_RANGE:\n"
                "                _BY_RANGE[key] = self._encode(data, sample_rate=sample_rate)\n"
                "            hit = _BY_RANGE[key]\n"
                '            return Encoding(hit.emb.copy(), hit.attr.copy(), {"time": hit.offsets["time"].copy()})\n'
                "        return self._encode(data, sample_rate=sample_rate)\n\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + "_BY_RANGE: dict = {}\n"),
        ),
        "two signals of one length, dtype and rate with the same minimum and maximum (100 int16 samples at 8 kHz: "
        "zeros with -32768 and 32767 at samples 10 and 20, then at 60 and 75): the second gets the first's tokens, "
        "so the result depends on what the process saw first (consistent within it)",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "os_errors_not_caught",
        "check_files",
        (
            edit(M, LOAD_START, "        # wave.open reports a file it cannot read as wave.Error\n"),
            edit(
                M,
                "        except (OSError, EOFError, wave.Error) as exc:\n",
                "        except (EOFError, wave.Error) as exc:\n",
            ),
        ),
        "a missing file or a folder: load raises FileNotFoundError / IsADirectoryError, not InputError",
        held_out=True,
        round=6,
    ),
    # -- controls, round 6 --
    Mutant(
        "ctl_frames_by_pad",
        None,
        (
            edit(
                M,
                "        frames = np.zeros(count * size)\n        frames[:n] = x\n"
                "        frames = frames.reshape(count, size)                       # (N, size), zero-padded tail\n",
                "        frames = np.pad(x, (0, count * size - n)).reshape(count, size)  # (N, size), zero-padded tail\n",
            ),
        ),
        "a refactor: the zero-padded frames by np.pad (the same float64 values)",
        held_out=True,
        round=6,
    ),
    Mutant(
        "ctl_db_by_power",
        None,
        (
            edit(
                M,
                "        db = 20.0 * np.log10(np.maximum(rms, 1e-30))\n",
                "        db = 10.0 * np.log10(np.maximum(rms * rms, 1e-60))  # dB of the mean power\n",
            ),
        ),
        "a refactor: the level in dB from the mean power (last bits may differ; clipped as before)",
        held_out=True,
        round=6,
    ),
)

# -- held out, round 7: written while the kit is being changed to close round 6's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_7)
# before any run of any kit against them --
BANDS = "        bands = np.log1p(power @ _band_matrix(power.shape[1]) / size)   # (N, 16)\n"
POWER = "        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2           # (N, size // 2 + 1)\n"
ATTR_ALLOC = "        attr = np.zeros((count, 384), dtype=np.float32)\n"
POSITION = '            "hello.time.position": np.clip((starts / sample_rate + ends) / 2.0 / duration, 0.0, 1.0),\n'
LAST_SLOT = '    ("hello.time.position", "frame centre within the whole signal", "centre / duration in [0, 1]"),\n])\n'
EMPTY_CHECK = '    if data.size == 0:\n        raise InputError(source, "the signal is empty")\n'
WRITE_WAV = (
    '        pcm = np.clip(np.round(x * 32768.0), -32768, 32767).astype("<i2")\n'
    '        with wave.open(os.fspath(path), "wb") as wav:\n'
    "            wav.setnchannels(1)\n"
    "            wav.setsampwidth(2)\n"
    "            wav.setframerate(int(rate))\n"
    "            wav.writeframes(pcm.tobytes())\n"
)
HELD_OUT_7: tuple[Mutant, ...] = (
    Mutant(
        "bands_log_not_log1p",
        "check_finite",
        (
            edit(
                M,
                BANDS,
                "        bands = np.log(power @ _band_matrix(power.shape[1]) / size)     # (N, 16) log power per band\n",
            ),
        ),
        "a silent frame (1000 float32 zeros at 16 kHz): log(0) = -inf in every band, the band norm is inf, so the "
        "frame is not taken as silent and its direction is -inf / inf = NaN",
        held_out=True,
        round=7,
    ),
    Mutant(
        "int8_emb_quantised",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                RENORM
                + "        if data.dtype == np.int8:  # 8-bit PCM: an embedding in 8-bit steps (no finer than its source)\n"
                "            emb = np.round(emb * 127.0) / 127.0\n",
            ),
        ),
        "int8 samples (the strategy draws float32 and int16; 8-bit WAV files load as int8), any frame (1000 int8 "
        "samples of noise at 8 kHz): rounded to steps of 1/127 the embedding's norm is off by 1e-3 to 4e-3",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "crest_slot_unclipped",
        "check_attr_bounds",
        (
            edit(
                M,
                LAST_SLOT,
                '    ("hello.time.position", "frame centre within the whole signal", "centre / duration in [0, 1]"),\n'
                '    ("hello.level.crest", "crest factor of the frame: peak over RMS, in dB",\n'
                '     "dB / 20, in [0, 1] for audio (crest factors stay under 20 dB)"),\n'
                "])\n",
            ),
            edit(
                M,
                POSITION,
                POSITION
                + '            "hello.level.crest": np.where(rms > 0, 20.0 * np.log10(np.maximum(np.abs(frames).max(axis=1), '
                "1e-30) / np.maximum(rms, 1e-30)), 0.0) / 20.0,\n",
            ),
        ),
        "a frame whose crest factor is above 20 dB, e.g. a click (800 float32 samples at 16 kHz, zeros but sample 400 "
        "= 0.5: crest sqrt(800), 29 dB): the new slot 262 is 1.45; hypothesis' sparse arrays often draw such frames",
        held_out=True,
        round=7,
    ),
    Mutant(
        "token_array_index_confusion",
        "check_declared_slots",
        (
            edit(
                M,
                ATTR_ALLOC,
                "        tokens = np.zeros((count, 640), dtype=np.float32)  # one array per token: emb (0..255), then attr\n"
                "        tokens[:, :256] = emb\n",
            ),
            edit(
                M,
                COLUMNS_LOOP,
                "        for slot, values in columns.items():\n            tokens[:, SCHEMA.index(slot)] = values\n",
            ),
            edit(M, RETURN, '        return Encoding(tokens[:, :256], tokens[:, 256:], {"time": time})\n'),
        ),
        "every signal: SCHEMA.index gives attr positions (256..261), used here as positions in the 640-value token, "
        "so the six values land in attr 0..5 (the language zone, undeclared) and the declared slots stay 0",
        held_out=True,
        round=7,
    ),
    Mutant(
        "one_sample_tail_dropped_time_kept",
        "check_offsets",
        (
            edit(
                M,
                RETURN,
                "        if count > 1 and lengths[-1] == 1:  # a last frame of one sample has no spectrum: no token for it\n"
                "            emb, attr = emb[:-1], attr[:-1]\n" + RETURN,
            ),
        ),
        "a signal whose last frame holds one sample (801 samples at 16 kHz, frame 800; 11 samples at 100 Hz): the "
        "token is dropped from emb and attr but not from offsets['time'], which has one row more than there are "
        "tokens",
        held_out=True,
        round=7,
    ),
    Mutant(
        "long_chunks_time_restarts",
        "check_offsets",
        (
            edit(
                M,
                SIZE,
                SIZE + "        step = CHUNK - CHUNK % size  # whole frames per chunk\n"
                "        if n > CHUNK and size <= CHUNK:  # a long signal: chunks of whole frames bound the FFT's memory\n"
                "            parts = [self.encode(data[i : i + step], sample_rate=sample_rate) for i in range(0, n, step)]\n"
                "            return Encoding(np.concatenate([p.emb for p in parts]), np.concatenate([p.attr for p in parts]),\n"
                '                            {"time": np.concatenate([p.offsets["time"] for p in parts])})\n',
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + "CHUNK = 1 << 16  # samples per FFT pass of a long signal\n"),
        ),
        "a signal longer than 65536 samples (100000 float32 samples of noise at 16 kHz; the strategy draws at most "
        "2000): each chunk's times start again at 0 s, so the starts decrease at the chunk boundary",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "pre_emphasis_state",
        "check_determinism",
        (
            edit(
                M,
                POWER,
                "        emphasised = np.zeros(count * size)  # pre-emphasis y[t] = x[t] - 0.97 x[t-1] for the spectrum: the\n"
                '        emphasised[:n] = x - 0.97 * np.concatenate(([_EMPHASIS["last"]], x[:-1]))  # filter runs on across\n'
                '        _EMPHASIS["last"] = float(x[-1])  # calls, so the chunks of one stream join seamlessly\n'
                "        power = np.abs(np.fft.rfft(emphasised.reshape(count, size), axis=1)) ** 2  # (N, size // 2 + 1)\n",
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + '_EMPHASIS = {"last": 0.0}  # the pre-emphasis filter\'s state\n'),
        ),
        "any signal tokenized after another one (or twice) whose last sample differs from the state before the first "
        "call (1000 float32 samples of noise at 16 kHz, tokenized twice): the first frame's spectrum, so its "
        "embedding and centroid, differ between the calls",
        held_out=True,
        round=7,
    ),
    Mutant(
        "batch_split_item_restarts",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # bound the memory of one call: sub-batches of at most 2**16 samples\n"
            "        from v22sdk import TokenBatch\n\n"
            "        groups: list = [[]]\n"
            "        total = 0\n"
            "        for item in items:\n"
            "            size = int(np.size(getattr(item, 'data', item)))\n"
            "            if groups[-1] and total + size > 1 << 16:\n"
            "                groups.append([])\n"
            "                total = 0\n"
            "            groups[-1].append(item)\n"
            "            total += size\n"
            "        if len(groups) == 1:\n"
            "            return super().tokenize_batch(items)\n"
            "        return TokenBatch.concat([Modality.tokenize_batch(self, group) for group in groups])\n"
        ),
        "a batch whose items add up to more than 65536 samples (70000 and 1000 float32 samples at 16 kHz; the strategy "
        "draws at most 2000 per item): each sub-batch numbers its items from 0, so the second item's tokens say "
        "item 0",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "config_legacy_default",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        # only what differs from the defaults\n"
            "        return {k: v for k, v in super().config().items() if v != attrs.fields_dict(type(self))[k].default}\n\n"
            "    @classmethod\n"
            "    def from_config(cls, config):\n"
            "        # configs written before 0.1 left frame_seconds out when it was 0.025 s, that version's default\n"
            "        return cls(**{'frame_seconds': 0.025, **config})\n"
        ),
        "the default configuration: config() is {} (0.05 s is the default), which from_config reads as the old "
        "default of 0.025 s, so the rebuilt modality has another config and other tokens",
        held_out=True,
        round=7,
    ),
    Mutant(
        "inf_saturated",
        "check_invalid_inputs",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = np.nan_to_num(data.astype(np.float64), nan=np.nan, posinf=1.0, neginf=-1.0)  # an overflowed "
                "sample: full scale\n    bad = ~np.isfinite(x)\n",
            ),
        ),
        "every float32 valid input (the strategy's tones and noise): the default 'non_finite' case with inf (in the "
        "middle) is tokenized with the inf read as full scale, not refused (NaN still is)",
        held_out=True,
        round=7,
    ),
    Mutant(
        "khz_rates_scaled",
        "check_input_spec",
        method(
            "    def check_units(self, units, source):\n"
            "        units = dict(units)\n"
            "        rate = units.get('sample_rate')\n"
            "        if isinstance(rate, (int, float)) and 8.0 <= rate < 100.0:  # a rate given in kHz (44.1, 48)\n"
            "            units['sample_rate'] = rate * 1000.0\n"
            "        return super().check_units(units, source)\n"
        ),
        "a sample rate just below the declared minimum of 100 Hz (99.9 Hz; the strategy draws 100 Hz and up): "
        "accepted as 99.9 kHz, not refused (0, negative, NaN and 1e9 still are)",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "strided_refused",
        "check_edge_inputs",
        (
            edit(
                M,
                EMPTY_CHECK,
                "    if not data.flags.c_contiguous:  # the FFT wants the samples side by side\n"
                '        raise InputError(source, "the samples must be contiguous in memory (pass np.ascontiguousarray(x))")\n'
                + EMPTY_CHECK,
            ),
        ),
        "a strided or reversed view of a valid signal (x[::2] of 2000 float32 samples at 16 kHz; the strategy draws "
        "contiguous arrays): InputError, while the same samples in a contiguous array are tokenized",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "save_24bit_for_int32",
        "check_files",
        (
            edit(
                M,
                WRITE_WAV,
                '        pcm = np.clip(np.round(x * 32768.0), -32768, 32767).astype("<i2")\n'
                "        width, raw = 2, pcm.tobytes()\n"
                '        if sample.data.dtype.kind == "i" and sample.data.dtype.itemsize >= 4:  # 32-bit PCM: keep 24 bits\n'
                '            pcm24 = np.clip(np.round(x * 8388608.0), -8388608, 8388607).astype("<i4")\n'
                "            width, raw = 3, pcm24.view(np.uint8).reshape(-1, 4)[:, :3].tobytes()\n"
                '        with wave.open(os.fspath(path), "wb") as wav:\n'
                "            wav.setnchannels(1)\n"
                "            wav.setsampwidth(width)\n"
                "            wav.setframerate(int(rate))\n"
                "            wav.writeframes(raw)\n",
            ),
        ),
        "a file saved from int32 or int64 samples (the strategy draws float32 and int16): save writes 24-bit PCM, "
        "which load refuses ('24-bit PCM is not supported'), so tokenize_file refuses a file save wrote",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "projection_from_global_rng",
        "check_fresh_process",
        (
            edit(
                M,
                "np.random.default_rng(SEED).standard_normal((256, N_BANDS + 1))",
                "np.random.standard_normal((256, N_BANDS + 1))",
            ),
            edit(
                M,
                "SEED = 22_0001\n",
                "SEED = 22_0001\nnp.random.seed(SEED)  # seeds the projection's draws, made on first use\n",
            ),
        ),
        "a process in which anything draws from or reseeds NumPy's global generator between the import and the first "
        "call (hypothesis reseeds it for each example; np.random.seed(0) before tokenizing): the projection, so every "
        "embedding, differs from that of a process that tokenizes at once (consistent within a process)",
        rare=True,
        held_out=True,
        round=7,
    ),
    # -- controls, round 7 --
    Mutant(
        "ctl_truncated_wav_padded",
        None,
        (
            edit(
                M,
                TRUNCATED,
                "        if len(raw) < count * width * channels:  # a recording cut short: keep it, padded with zeros\n"
                "            raw = raw + bytes(count * width * channels - len(raw))\n",
            ),
        ),
        "a salvaging reader: a WAV cut inside its samples loads as what is there, zero-padded to the header's length "
        "(valid tokens, which a truncated file may give; a header cut short is still an InputError)",
        held_out=True,
        round=7,
    ),
    Mutant(
        "ctl_emb_sign_canonical",
        None,
        (
            edit(
                M,
                RENORM,
                RENORM
                + "        emb *= np.where(emb[:, :1] < 0, -1.0, 1.0)  # a canonical sign: first component non-negative\n",
            ),
        ),
        "a design change: each embedding's sign made canonical (first component >= 0): other vectors, still unit "
        "norm, deterministic and the same in batches",
        held_out=True,
        round=7,
    ),
)

# -- held out, round 8: written while the kit is being changed to close round 7's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_8)
# before any run of any kit against them --
DC = '            "hello.shape.dc": np.clip(frames.sum(axis=1) / lengths, -1.0, 1.0),\n'
RMS = "        rms = np.sqrt((frames ** 2).sum(axis=1) / lengths)\n"
FRAMING = (
    "        frames = np.zeros(count * size)\n"
    "        frames[:n] = x\n"
    "        frames = frames.reshape(count, size)                       # (N, size), zero-padded tail\n"
)
OPEN_WAV = '            with wave.open(os.fspath(path), "rb") as wav:\n'
RATE_UNIT = 'units=(Unit("sample_rate", "Hz", 100.0, 384_000.0, "samples per second"),),'
HELD_OUT_8: tuple[Mutant, ...] = (
    Mutant(
        "dc_relative_to_rms",
        "check_finite",
        (
            edit(
                M,
                DC,
                '            "hello.shape.dc": np.clip(frames.sum(axis=1) / lengths / rms, -1.0, 1.0),  # the DC share of '
                "the level\n",
            ),
        ),
        "a silent frame (1000 float32 zeros at 16 kHz, or any int16 silence the strategy draws): the mean over the RMS "
        "is 0 / 0, so the dc slot (attr 259) is NaN, which np.clip keeps",
        held_out=True,
        round=8,
    ),
    Mutant(
        "emb_zero_mean_after_renorm",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                RENORM
                + "        emb -= emb.mean(axis=1, keepdims=True)  # zero-mean embeddings: cosine becomes correlation\n",
            ),
        ),
        "any non-constant embedding (1000 float32 samples of noise at 16 kHz; every frame the strategy draws): the mean "
        "is taken out after the renormalisation, so the norm is sqrt(1 - 256 mean^2), off by 1e-4 to 1e-2",
        held_out=True,
        round=8,
    ),
    Mutant(
        "attr_absent_as_minus_one",
        "check_declared_slots",
        (
            edit(
                M,
                ATTR_ALLOC,
                "        attr = np.full((count, 384), -1.0, dtype=np.float32)  # a slot without a value reads as the bottom "
                "of its scale\n",
            ),
        ),
        "every signal (100 float32 samples of noise at 8 kHz): the 378 slots the schema does not declare (attr 0..255, "
        "262..383) are -1, not 0",
        held_out=True,
        round=8,
    ),
    Mutant(
        "time_from_onset",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                "        onset = int(np.argmax(x != 0)) if x.any() else 0  # times from the first sound, not the first "
                "sample\n"
                "        time = np.stack([starts / sample_rate, ends], axis=1) - onset / sample_rate\n",
            ),
        ),
        "a signal whose first sample is 0 and a later one is not (every non-silent tone the strategy draws starts at "
        "sin(0) = 0: a 440 Hz tone at 0.5, 1000 float32 samples at 16 kHz): the first frame starts at -1/16000 s, "
        "before the signal",
        held_out=True,
        round=8,
    ),
    Mutant(
        "negative_rate_abs",
        "check_invalid_inputs",
        method(
            "    def check_units(self, units, source):\n"
            "        units = dict(units)\n"
            "        rate = units.get('sample_rate')\n"
            "        if isinstance(rate, (int, float)) and rate < 0:  # a negated rate (some tools mark reversed takes so)\n"
            "            units['sample_rate'] = -rate\n"
            "        return super().check_units(units, source)\n"
        ),
        "every valid input: the plugin's own 'bad_units' case with sample_rate -8000 is tokenized at 8 kHz, not "
        "refused (0, NaN and 1e9 still are)",
        held_out=True,
        round=8,
    ),
    Mutant(
        "config_read_only_mapping",
        "check_config_roundtrip",
        method(
            "    def config(self):\n"
            "        # read-only: a caller cannot change the modality through the dict it was given\n"
            "        import types\n\n"
            "        return types.MappingProxyType(super().config())\n"
        ),
        "every configuration: config() is a mappingproxy, which json.dumps cannot write (TypeError), though "
        "from_config(config()) rebuilds the modality",
        held_out=True,
        round=8,
    ),
    Mutant(
        "batch_peak_normalised",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # one gain for the whole batch: its loudest float signal at full scale, so levels compare across items\n"
            "        def is_float(item):\n"
            "            data = getattr(item, 'data', None)\n"
            "            return isinstance(data, np.ndarray) and data.dtype.kind == 'f' and data.size > 0\n\n"
            "        loudest = max((float(np.abs(it.data).max()) for it in items if is_float(it)), default=0.0)\n"
            "        if 0.0 < loudest <= MAX_FLOAT_AMPLITUDE:\n"
            "            items = [Sample(it.data / loudest, it.units, it.source) if is_float(it) else it for it in items]\n"
            "        return super().tokenize_batch(items)\n"
        ),
        "a batch holding a float signal whose peak is not exactly full scale (a 440 Hz tone at 0.5, 1000 float32 "
        "samples at 16 kHz, alone or with others): it is tokenized at twice its level, so its rms_db and peak differ "
        "from the single's",
        held_out=True,
        round=8,
    ),
    Mutant(
        "rate_slot_range_96k",
        "check_attr_bounds",
        (
            edit(
                M,
                LAST_SLOT,
                '    ("hello.time.position", "frame centre within the whole signal", "centre / duration in [0, 1]"),\n'
                '    ("hello.time.rate", "sample rate of the signal",\n'
                '     "log2(rate / 100 Hz) / log2(960): 100 Hz -> 0, 96 kHz -> 1"),\n'
                "])\n",
            ),
            edit(
                M,
                POSITION,
                POSITION
                + '            "hello.time.rate": np.full(count, np.log2(sample_rate / 100.0) / np.log2(960.0)),\n',
            ),
        ),
        "a sample rate above 96 kHz (the strategy draws up to 48 kHz; the input spec allows 384 kHz): 1000 float32 "
        "samples of noise at 192 kHz give the new slot 262 a value of 1.10 (1.20 at 384 kHz)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "as_strided_frames_float64",
        "check_edge_inputs",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = data.astype(np.float64, copy=False)  # float64 samples are used as they are\n"
                "    bad = ~np.isfinite(x)\n",
            ),
            edit(
                M,
                FRAMING,
                "        if n == count * size:  # whole frames: a zero-copy view of the samples\n"
                "            frames = np.lib.stride_tricks.as_strided(x, shape=(count, size), strides=(size * 8, 8),\n"
                "                                                     writeable=False)\n"
                "        else:\n"
                "            frames = np.zeros(count * size)\n"
                "            frames[:n] = x\n"
                "            frames = frames.reshape(count, size)                   # (N, size), zero-padded tail\n",
            ),
        ),
        "a strided view of float64 samples that fill whole frames (y[::2] of 3200 float64 samples of noise at 16 kHz: "
        "1600 samples, two frames of 800; the strategy draws contiguous float32 and int16): the frames read the base "
        "array's consecutive samples, so the tokens differ from those of the same samples contiguous",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "rate_max_exclusive",
        "check_input_spec",
        method(
            "    def check_units(self, units, source):\n"
            "        rate = units.get('sample_rate')\n"
            "        if isinstance(rate, (int, float)) and rate >= 384_000.0:  # the range's top is exclusive\n"
            "            raise InputError(source, f'sample_rate must be below 384 kHz, got {rate:g}')\n"
            "        return super().check_units(units, source)\n"
        ),
        "a sample rate of exactly 384 kHz, the declared maximum (the strategy draws up to 48 kHz): a valid input "
        "refused with InputError (383999 Hz is still taken)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "batch_of_four_padded_to_longest",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # four or more signals: each zero-padded to the longest, so they share one FFT layout\n"
            "        arrays = [getattr(it, 'data', None) for it in items]\n"
            "        if len(items) < 4 or not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays):\n"
            "            return super().tokenize_batch(items)\n"
            "        longest = max(a.size for a in arrays)\n"
            "        return super().tokenize_batch(\n"
            "            [Sample(np.pad(a, (0, longest - a.size)), it.units, it.source) for a, it in zip(arrays, items)])\n"
        ),
        "a batch of four or more signals of different lengths (2000, 100, 100 and 100 float32 samples of noise at "
        "8 kHz; the kit's batches hold 1 to 3 items): the short ones get the longest one's frame count, trailing "
        "silent tokens and other positions",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "cache_keyed_on_abs_sum",
        "check_fresh_process",
        (
            edit(
                M,
                SIGNAL,
                "        x = as_signal(data)\n"
                "        key = (data.dtype.str, x.size, float(sample_rate), self.frame_seconds, float(np.abs(x).sum()))\n"
                "        if key in _TOKENS:  # tokenized before (the key is a cheap fingerprint of the signal)\n"
                "            return _TOKENS[key]\n"
                "        n = x.size\n",
            ),
            edit(
                M,
                RETURN,
                '        _TOKENS[key] = Encoding(emb.astype(np.float32), attr, {"time": time})\n        return _TOKENS[key]\n',
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + "_TOKENS: dict = {}  # encodings by signal fingerprint\n"),
        ),
        "two signals of one length, dtype and rate whose absolute values sum to the same (1000 float32 samples of "
        "noise at 16 kHz, then its negation, whose dc slot has the other sign; the strategy's draws almost never pair "
        "so): the second gets the first's tokens, so a process that meets them in the other order gives other tokens "
        "(consistent within a process)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "load_path_object_not_fspath",
        "check_files",
        (edit(M, OPEN_WAV, '            with wave.open(path, "rb") as wav:\n'),),
        "a pathlib.Path to a valid WAV (save wrote it; the strategy's samples are arrays, never files): wave.open takes "
        "a non-str for a file object, and AttributeError ('PosixPath' object has no attribute 'read') escapes load "
        "and tokenize_file, not InputError or tokens (a str path still loads)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "int_pcm_exact_square_sum",
        "check_finite",
        (
            edit(
                M,
                RMS,
                RMS + '        if data.dtype.kind == "i":  # integer PCM: the energy summed exactly, in integers\n'
                "            pcm = np.zeros(count * size, dtype=np.int64)\n"
                "            pcm[:n] = data\n"
                "            energy = (pcm.reshape(count, size) ** 2).sum(axis=1)\n"
                "            rms = np.sqrt(energy / lengths) / (float(np.iinfo(data.dtype).max) + 1.0)\n",
            ),
        ),
        "int32 or int64 samples of more than a quarter of full scale (1000 int32 samples of noise at 8 kHz; the "
        "strategy draws int16, whose squares fit): the int64 sum of squares wraps, negative in some frames (1 of the "
        "3 here), whose rms_db (attr 256) is NaN",
        rare=True,
        held_out=True,
        round=8,
    ),
    # -- controls, round 8 --
    Mutant(
        "ctl_attr_columns_at_once",
        None,
        (
            edit(
                M,
                COLUMNS_LOOP,
                "        attr[:, [SCHEMA.index(slot) for slot in columns]] = np.stack(list(columns.values()), axis=1)\n",
            ),
        ),
        "a refactor: the six columns written by one fancy-indexed assignment (the same float64 -> float32 casts, the "
        "same bits)",
        held_out=True,
        round=8,
    ),
    Mutant(
        "ctl_rate_max_96k",
        None,
        (edit(M, RATE_UNIT, 'units=(Unit("sample_rate", "Hz", 100.0, 96_000.0, "samples per second"),),'),),
        "a stricter plugin: rates above 96 kHz refused with InputError, declared as the input spec's maximum (the "
        "strategy draws up to 48 kHz; 96 kHz itself is taken)",
        held_out=True,
        round=8,
    ),
)

FRAME_FIELD = "    frame_seconds: float = attrs.field(default=0.05, validator=_positive)\n"
INT_PATH = (
    '    if data.dtype.kind == "i":\n        return data.astype(np.float64) / (float(np.iinfo(data.dtype).max) + 1.0)\n'
)
LOAD_RETURN = '        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate)}, str(path))\n'
LENGTHS = "        lengths = np.minimum(size, n - starts)                     # real samples per frame\n"
SILENCE_MIX = "        emb = direction @ q[:, :N_BANDS].T + silent[:, None] * q[:, N_BANDS]\n"
HELD_OUT_9: tuple[Mutant, ...] = (
    Mutant(
        "bands_relative_to_peak_bin",
        "check_finite",
        (
            edit(
                M,
                BANDS,
                "        peak_bin = power.max(axis=1, keepdims=True)  # the spectrum's shape, whatever the level\n"
                "        bands = np.log1p(power @ _band_matrix(power.shape[1]) / peak_bin)   # (N, 16)\n",
            ),
        ),
        "a silent frame (1000 float32 zeros at 16 kHz, or any silence the strategy draws): the band energies over the "
        "loudest bin are 0 / 0, the band norm is NaN, so the frame is not taken as silent and its embedding is NaN",
        held_out=True,
        round=9,
    ),
    Mutant(
        "soft_silence_blend",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                RENORM + "        level = np.sqrt((frames ** 2).sum(axis=1) / lengths)\n"
                "        quiet = np.clip(-20.0 * np.log10(np.maximum(level, 1e-30)) / 60.0, 0.0, 1.0)  # 0 dBFS -> 0, "
                "-60 -> 1\n"
                "        emb = (1.0 - quiet)[:, None] * emb + quiet[:, None] * q[:, N_BANDS]  # quiet frames fade "
                "toward silence\n",
            ),
        ),
        "any frame between 0 and -60 dBFS (1000 float32 samples of noise at 16 kHz, a 440 Hz tone at 0.5; nearly "
        "every non-silent frame the strategy draws): the blend of two orthogonal unit vectors has a norm of "
        "sqrt((1 - q)^2 + q^2), 0.92 for full-scale noise",
        held_out=True,
        round=9,
    ),
    Mutant(
        "level_mirrored_to_audio_slot",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                COLUMNS_LOOP
                + "        # the level also in the audio modality's aud.loud.rms_dbfs slot, so hello and audio tokens "
                "compare on loudness\n"
                '        attr[:, 290] = attr[:, SCHEMA.index("hello.level.rms_db")]\n',
            ),
        ),
        "every signal (100 float32 samples of noise at 8 kHz; silence too, whose rms_db is -1): slot 290, which the "
        "hello schema does not declare (it is the built-in audio modality's), holds the frame's level",
        held_out=True,
        round=9,
    ),
    Mutant(
        "time_as_start_and_length",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                "        time = np.stack([starts / sample_rate, lengths / sample_rate], axis=1)  # (start, duration) "
                "per frame\n",
            ),
        ),
        "a signal of two frames or more (1000 float32 samples of noise at 16 kHz, frames of 800; the strategy's "
        "signals at 100 Hz have frames of 5 samples): the second column is the frame's length, so from the second "
        "frame on the 'end' (0.0125 s) lies before the start (0.05 s)",
        held_out=True,
        round=9,
    ),
    Mutant(
        "batch_shares_first_rate",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # one rate per batch (the first item's): every item is framed with one FFT size\n"
            "        first = getattr(items[0], 'units', {}).get('sample_rate') if items else None\n"
            "        if first is not None:\n"
            "            items = [Sample(it.data, {**it.units, 'sample_rate': first}, it.source)\n"
            "                     if isinstance(it, Sample) else it for it in items]\n"
            "        return super().tokenize_batch(items)\n"
        ),
        "a batch of signals at different rates (1000 float32 samples of noise at 16 kHz, then 1000 at 8 kHz; the "
        "strategy's rates differ in nearly every pair): the second is framed and timed at the first's rate",
        held_out=True,
        round=9,
    ),
    Mutant(
        "empty_check_after_float_scan",
        "check_invalid_inputs",
        (
            edit(M, EMPTY_CHECK, ""),
            edit(M, "    return x\n", EMPTY_CHECK + "    return x\n"),
        ),
        "every valid input: the plugin's own 'empty' case (data[:0]) reaches the float checks first, so float32 "
        "gives ValueError from the amplitude scan of a zero-size array and int16 (returned before the check) gives "
        "zero tokens, not InputError",
        held_out=True,
        round=9,
    ),
    Mutant(
        "memo_field_in_config",
        "check_config_roundtrip",
        (
            edit(
                M,
                FRAME_FIELD,
                FRAME_FIELD
                + "    _memo: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)  # tokens by signal "
                "bytes\n",
            ),
            edit(
                M,
                SIGNAL,
                "        x = as_signal(data)\n"
                "        key = (data.dtype.str, data.shape, data.tobytes(), float(sample_rate))\n"
                "        if key in self._memo:  # the same signal again: its tokens, copied\n"
                "            e = self._memo[key]\n"
                "            return Encoding(e.emb.copy(), e.attr.copy(), {k: v.copy() for k, v in e.offsets.items()})\n"
                "        n = x.size\n",
            ),
            edit(
                M,
                RETURN,
                '        self._memo[key] = Encoding(emb.astype(np.float32), attr, {"time": time})\n'
                '        return Encoding(emb.astype(np.float32), attr.copy(), {"time": time.copy()})\n',
            ),
        ),
        "every configuration: attrs.asdict puts the private _memo field in config() (as {} before the first call, "
        "keyed by tuples after it, which json.dumps refuses), and from_config(config()) raises TypeError (an "
        "unexpected keyword '_memo')",
        held_out=True,
        round=9,
    ),
    Mutant(
        "batch_pcm_as_int16",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items):\n"
            "        # integer PCM is 16-bit in a WAV: a batch's integer items are held as int16, like the files they "
            "come from\n"
            "        def as_pcm16(item):\n"
            "            data = getattr(item, 'data', None)\n"
            "            if isinstance(data, np.ndarray) and data.dtype.kind == 'i' and data.dtype != np.int16:\n"
            "                return Sample(data.astype(np.int16), item.units, item.source)\n"
            "            return item\n\n"
            "        return super().tokenize_batch([as_pcm16(it) for it in items])\n"
        ),
        "a batch holding an int8, int32 or int64 signal (1000 int32 samples of noise at 8 kHz, or 1000 int8 samples; "
        "the strategy draws int16): its samples are cast to int16 (int32 wrapped; int8 read on the 16-bit scale, 256 "
        "times quieter), so its tokens differ from the single's",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "long_signal_cache_by_ends",
        "check_fresh_process",
        (
            edit(
                M,
                SIGNAL,
                "        x = as_signal(data)\n"
                "        key = None\n"
                "        if x.size > 65536:  # a long signal: fingerprinted by its ends (hashing it all costs about as "
                "much as tokenizing)\n"
                "            key = (data.dtype.str, x.size, float(sample_rate), self.frame_seconds, x[:4096].tobytes(), "
                "x[-4096:].tobytes())\n"
                "            if key in _LONG:\n"
                "                return _LONG[key]\n"
                "        n = x.size\n",
            ),
            edit(
                M,
                RETURN,
                '        enc = Encoding(emb.astype(np.float32), attr, {"time": time})\n'
                "        if key is not None:\n"
                "            _LONG[key] = enc\n"
                "        return enc\n",
            ),
            edit(M, SOURCE_LINE, SOURCE_LINE + "_LONG: dict = {}  # tokens of long signals by fingerprint\n"),
        ),
        "two signals longer than 65536 samples of one length, dtype and rate that agree in their first and last 4096 "
        "samples and differ between (100000 float32 samples of noise at 16 kHz, then the same with samples "
        "50000..50999 zeroed; the strategy draws at most 2000): the second gets the first's tokens, so a process that "
        "meets them in the other order gives other tokens (consistent within a process)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "stereo_downmixed",
        "check_input_spec",
        (
            edit(
                M,
                SHAPE_CHECKS,
                "    if data.ndim == 2 and data.shape[1] == 2:  # interleaved stereo (T, 2): mixed down to mono\n"
                '        scale = float(np.iinfo(data.dtype).max) + 1.0 if data.dtype.kind == "i" else 1.0\n'
                "        data = data.mean(axis=1, dtype=np.float64) / scale\n" + SHAPE_CHECKS,
            ),
        ),
        "a (T, 2) stereo array (1000 x 2 float32 samples of noise at 16 kHz, or int16 PCM), a rank the input spec "
        "does not declare (the strategy draws 1-D signals): tokenized as its mono mix, not refused ((T, 1) and (1, T) "
        "still are)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "read_only_refused",
        "check_edge_inputs",
        (
            edit(
                M,
                EMPTY_CHECK,
                EMPTY_CHECK
                + "    if not data.flags.writeable:  # a frozen buffer (a memory-mapped file opened read-only)\n"
                '        raise InputError(source, "the signal array is read-only; pass a writeable copy")\n',
            ),
        ),
        "a read-only array of valid samples (1000 float32 samples of noise at 16 kHz with setflags(write=False), or "
        "np.frombuffer of int16 bytes; the strategy's arrays are writeable): InputError, while the same values "
        "writeable give tokens",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "load_reports_bit_depth",
        "check_files",
        (
            edit(
                M,
                LOAD_RETURN,
                '        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate), "bits": float(8 * width)}, '
                "str(path))\n",
            ),
        ),
        "any file (a WAV that save wrote from 1000 float32 samples of noise at 16 kHz; the strategy's samples are "
        "arrays, never files): load returns a 'bits' unit the input spec does not declare, so tokenize_file refuses "
        "every valid file (UnitsError)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "wide_pcm_shifted_in_place",
        "check_determinism",
        (
            edit(
                M,
                INT_PATH,
                '    if data.dtype.kind == "i":\n'
                "        if data.dtype.itemsize > 2:  # 24/32-bit PCM: its top 16 bits, as a 16-bit meter reads it\n"
                "            data >>= 8 * (data.dtype.itemsize - 2)\n"
                "            return data.astype(np.float64) / 32768.0\n"
                "        return data.astype(np.float64) / (float(np.iinfo(data.dtype).max) + 1.0)\n",
            ),
        ),
        "int32 or int64 samples (1000 int32 samples of noise at 8 kHz; the strategy draws int16): the caller's own "
        "array is shifted right by 16 bits (int64: 48), so a second call reads other samples and gives other "
        "tokens (a read-only array raises ValueError)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "duration_slot_open_top",
        "check_attr_bounds",
        (
            edit(
                M,
                LAST_SLOT,
                '    ("hello.time.position", "frame centre within the whole signal", "centre / duration in [0, 1]"),\n'
                '    ("hello.time.duration", "duration of the whole signal",\n'
                '     "log2(duration / 1 ms) / log2(60000): 1 ms -> 0, one minute -> 1, clipped at -1"),\n'
                "])\n",
            ),
            edit(
                M,
                POSITION,
                POSITION
                + '            "hello.time.duration": np.full(count, max(np.log2(duration / 0.001) / np.log2(60_000.0), '
                "-1.0)),\n",
            ),
        ),
        "a signal longer than a minute (6100 float32 samples of noise at 100 Hz: 61 s; the strategy draws at most 2000 "
        "samples, 20 s at 100 Hz): the new slot 262 is 1.0015 (only its bottom is clipped)",
        rare=True,
        held_out=True,
        round=9,
    ),
    # -- controls, round 9 --
    Mutant(
        "ctl_lengths_by_clip",
        None,
        (
            edit(
                M,
                LENGTHS,
                "        lengths = np.clip(n - starts, None, size)                  # real samples per frame\n",
            ),
        ),
        "a refactor: the real samples per frame by np.clip with no lower bound (the same int64 values, the same bits)",
        held_out=True,
        round=9,
    ),
    Mutant(
        "ctl_silence_column_negated",
        None,
        (
            edit(
                M,
                SILENCE_MIX,
                "        emb = direction @ q[:, :N_BANDS].T - silent[:, None] * q[:, N_BANDS]  # silence: minus the "
                "17th column\n",
            ),
        ),
        "a design change: a silent frame gets the negated 17th column (still a unit vector orthogonal to every "
        "non-silent embedding, the same in every process): other silent tokens, every rule kept",
        held_out=True,
        round=9,
    ),
)

STARTS = "        starts = np.arange(count) * size\n"
BAND_MATRIX_END = "    return np.eye(N_BANDS)[band]\n"
SAVE_OPEN = '        with wave.open(os.fspath(path), "wb") as wav:\n'
COUNT = "        count = -(-n // size)\n"
INT_SCALE = "        return data.astype(np.float64) / (float(np.iinfo(data.dtype).max) + 1.0)\n"
HELD_OUT_10: tuple[Mutant, ...] = (
    Mutant(
        "memo_ignores_rate",
        "check_fresh_instance",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE + "#: Each meter's memo of the signals it has metered (id(meter) -> {samples: tokens}).\n"
                "_MEMO: dict[int, dict[tuple[str, bytes], Encoding]] = {}\n",
            ),
            edit(
                M,
                ENCODE,
                ENCODE + "        # the same recording is often metered again: reuse its tokens\n"
                "        memo = _MEMO.setdefault(id(self), {})\n"
                "        key = (data.dtype.str, data.tobytes()) if isinstance(data, np.ndarray) else None\n"
                "        if key is not None and key in memo:\n"
                "            return memo[key]\n"
                "        enc = self._encode(data, sample_rate=sample_rate)\n"
                "        if key is not None:\n"
                "            memo[key] = enc\n"
                "        return enc\n"
                "\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
        ),
        "the same samples at another rate on one instance (1000 float32 zeros at 16 kHz, then the same zeros at 8 kHz; "
        "the strategy draws silences of one length and dtype at different rates): the memo is keyed on the samples "
        "only, so the second gets the first's 2 tokens ending at 0.0625 s where a fresh instance gives 3 ending at "
        "0.125 s (in the other order, ends past the signal's end)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "time_centred_nominal_half",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                "        centres = (starts + lengths / 2.0) / sample_rate  # each frame's span: its centre +- half a frame\n"
                "        half = self.frame_seconds / 2.0\n"
                "        time = np.stack([centres - half, centres + half], axis=1)\n",
            ),
        ),
        "any signal with a partial frame (100 float32 samples of noise at 16 kHz: one frame of 100 samples, centre "
        "3.1 ms; 1000 samples: the last frame of 200): the span is the nominal frame around the real samples' centre, "
        "so it starts before 0 s or ends after the signal's end (nearly every signal the strategy draws)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "noise_gate_in_callers_pcm",
        "check_determinism",
        (
            edit(
                M,
                INT_SCALE,
                "        data[(data > -4) & (data < 4)] = 0  # gate the PCM dither hiss (|x| < 4 LSB)\n" + INT_SCALE,
            ),
        ),
        "integer PCM with samples between -3 and 3 other than 0 (1000 int16 samples of [0, 1, -2, 3, 100] repeated, "
        "at 8 kHz; the strategy's int16 PCM draws small values often): the caller's own array is gated to 0, so it "
        "is changed by encode (and a read-only one raises ValueError)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "batch_stream_times",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items: Any) -> Any:\n"
            "        from v22sdk import TokenBatch\n"
            "\n"
            "        batch = super().tokenize_batch(items)\n"
            "        # a batch is one recording in pieces: each piece's times run on from the previous piece's end\n"
            '        time, item = batch.offsets["time"].copy(), batch.offsets["item"]\n'
            "        shift = 0.0\n"
            "        for k in range(int(item.max()) + 1):\n"
            "            rows = item == k\n"
            "            time[rows] += shift\n"
            "            shift = float(time[rows, 1].max())\n"
            "        return TokenBatch(emb=batch.emb, attr=batch.attr, modality=self.name,\n"
            '                          offsets={**batch.offsets, "time": time}, source=None)\n'
        ),
        "a batch of two signals or more (1000 float32 samples of noise at 16 kHz, then 100 at 8 kHz): the second "
        "item's times start at the first's end (0.0625 s), not at 0 s as its single's do",
        held_out=True,
        round=10,
    ),
    Mutant(
        "rate_min_zero",
        "check_invalid_inputs",
        (
            edit(
                M,
                RATE_UNIT,
                'units=(Unit("sample_rate", "Hz", 0.0, 384_000.0, "samples per second"),),',
            ),
        ),
        "every valid input: the plugin's own 'bad_units' case with sample_rate 0 passes the units check (the declared "
        "minimum is now 0 Hz) and encode divides by it: ZeroDivisionError, not an InputError",
        held_out=True,
        round=10,
    ),
    Mutant(
        "config_frame_decimal",
        "check_config_roundtrip",
        method(
            "    def config(self) -> dict[str, Any]:\n"
            "        import decimal\n"
            "\n"
            "        # exact decimal seconds: 0.05 s must not be written as 0.05000000000000000277\n"
            '        return {"frame_seconds": decimal.Decimal(repr(self.frame_seconds))}\n'
        ),
        "every configuration: config() holds a decimal.Decimal, which json.dumps cannot write (TypeError) and the "
        "frame_seconds validator refuses (ValueError from from_config)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "attr_flat_stride_of_emb",
        "check_declared_slots",
        (
            edit(
                M,
                COLUMNS_LOOP,
                "        flat = attr.reshape(-1)  # one fancy-indexed write per slot into the flat rows\n"
                "        rows = np.arange(count) * 256\n"
                "        for slot, values in columns.items():\n"
                "            flat[rows + SCHEMA.index(slot)] = values\n",
            ),
        ),
        "a signal of two frames or more (1000 float32 samples of noise at 16 kHz; the strategy's signals at 100 Hz "
        "have frames of 5 samples): the row stride is the embedding's 256, not attr's 384, so the second token's six "
        "values land in attr 128..133 of the second row (the vision zone, which hello does not declare)",
        held_out=True,
        round=10,
    ),
    # -- rare inputs, round 10 --
    Mutant(
        "pcm_scale_from_first_int_dtype",
        "check_fresh_instance",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE
                + "#: The PCM full scale each meter learned from its first integer input (one device per meter).\n"
                "_PCM_FULL_SCALE: dict[int, float] = {}\n",
            ),
            edit(
                M,
                SIGNAL,
                SIGNAL + '        if data.dtype.kind == "i":  # PCM: the full scale of this meter\'s device\n'
                "            first = _PCM_FULL_SCALE.setdefault(id(self), float(np.iinfo(data.dtype).max) + 1.0)\n"
                "            x = data.astype(np.float64) / first\n",
            ),
        ),
        "an instance that has tokenized int16 PCM, given int8, int32 or int64 samples (1000 int32 samples of noise "
        "at 8 kHz; the strategy draws int16 only): they are scaled by the int16 full scale (65536 times too loud, "
        "every level clipped), where a fresh instance reads them on their own full scale",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "save_refuses_existing",
        "check_files",
        (
            edit(
                M,
                SAVE_OPEN,
                '        with open(path, "xb") as fh, wave.open(fh, "wb") as wav:  # never overwrite a recording\n',
            ),
        ),
        "saving to a path that already exists (a second save to one path, as a file written again; the strategy's "
        "samples are arrays, never files): FileExistsError, not a written file or an InputError",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "big_band_table_sliced",
        "check_fresh_process",
        (
            edit(
                M,
                BAND_MATRIX_END,
                BAND_MATRIX_END + "\n\n"
                "#: The band table of the longest frame seen so far ((bins, 16) float64): long frames' tables are big,\n"
                "#: so shorter long frames slice it instead of building their own.\n"
                "_BIG_TABLE: list[np.ndarray] = []\n"
                "\n"
                "\n"
                "def _bands_for(bins: int) -> np.ndarray:\n"
                "    if bins <= 8192:\n"
                "        return _band_matrix(bins)\n"
                "    if not _BIG_TABLE or _BIG_TABLE[0].shape[0] < bins:\n"
                "        _BIG_TABLE[:] = [_band_matrix(bins)]\n"
                "    return _BIG_TABLE[0][:bins]\n",
            ),
            edit(M, BANDS, BANDS.replace("_band_matrix(power.shape[1])", "_bands_for(power.shape[1])")),
        ),
        "frames of more than 16384 samples at two sizes in one process (frames of 0.2 s at 192 kHz, then at 96 kHz: "
        "19201 and 9601 bins; the strategy draws up to 48 kHz, 4801 bins): the shorter frames get the first rows of "
        "the longer frames' table (the low bands only), which a process that meets them first does not",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "float64_padded_in_place",
        "check_determinism",
        (
            edit(
                M,
                FLOAT_PATH,
                "    x = data if data.dtype == np.float64 else data.astype(np.float64)  # float64 already: no copy\n"
                "    bad = ~np.isfinite(x)\n",
            ),
            edit(
                M,
                FRAMING,
                "        x.resize(count * size, refcheck=False)  # zero-pad in place: no second copy of a long signal\n"
                "        frames = x.reshape(count, size)                            # (N, size), zero-padded tail\n",
            ),
        ),
        "float64 samples whose length is not a whole number of frames (1000 float64 samples of noise at 16 kHz, "
        "frames of 800; the strategy draws float32 and int16): the caller's own array is resized to 1600 samples "
        "(zero-padded), so encode changes its input and a second call sees a 0.1 s signal (a strided view raises "
        "ValueError)",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "power_in_input_float_dtype",
        "check_finite",
        (
            edit(
                M,
                POWER,
                POWER + '        if data.dtype.kind == "f":  # the spectrum in the input\'s own precision\n'
                "            power = power.astype(np.result_type(data.dtype, np.float16))\n",
            ),
        ),
        "float16 samples of a loud frame (1000 float16 samples of a 440 Hz tone at 0.9, 16 kHz; the strategy draws "
        "float32 and int16): |X|^2 above 65504 is inf in float16, so the band norm is inf and the embedding NaN",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "long_frame_refused",
        "check_input_spec",
        (
            edit(
                M,
                SIZE,
                SIZE + "        if size > 65536:\n"
                '            raise InputError(SOURCE, f"frames of {size} samples are too long (at most 65536): "\n'
                '                                     "use a shorter frame_seconds")\n',
            ),
        ),
        "frame_seconds 0.2 at a rate above 327.68 kHz, the declared maximum of 384 kHz included (the strategy draws "
        "up to 48 kHz): every signal is refused with InputError, so the declared maximum is accepted by no input",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "frame_index_int16",
        "check_edge_inputs",
        (
            edit(
                M, STARTS, "        starts = np.arange(count, dtype=np.int16) * size  # frame starts (int16: compact)\n"
            ),
        ),
        "a signal longer than 32767 samples (40000 float32 samples of noise at 16 kHz; the strategy draws at most "
        "2000): n - starts overflows int16, an OverflowError, not tokens or an InputError",
        rare=True,
        held_out=True,
        round=10,
    ),
    # -- controls, round 10 --
    Mutant(
        "ctl_count_by_ceil",
        None,
        (edit(M, COUNT, "        count = (n + size - 1) // size\n"),),
        "a refactor: the frame count by (n + size - 1) // size (the same integer, the same bits)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "ctl_default_frame_40ms",
        None,
        (edit(M, FRAME_FIELD, FRAME_FIELD.replace("default=0.05", "default=0.04")),),
        "a design change: a default frame of 40 ms instead of 50 ms (other tokens for the default configuration, "
        "every rule kept)",
        held_out=True,
        round=10,
    ),
)

ZCR = '            "hello.shape.zcr": crossings / np.maximum(lengths - 1, 1),\n'
SILENT = "        silent = norm[:, 0] <= SILENCE\n"
ENDS = "        ends = (starts + lengths) / sample_rate\n"
CENTROID = (
    "        total = power.sum(axis=1)\n"
    "        centroid = np.where(silent | (total <= 0), 0.0, (power @ freq) / np.where(total > 0, total, 1.0))\n"
)
FINITE_TEST = (
    "    bad = ~np.isfinite(x)\n"
    "    if bad.any():\n"
    '        raise InputError(source, f"sample {int(np.argmax(bad))} is {x[bad][0]}; samples must be finite")\n'
)
HELD_OUT_11: tuple[Mutant, ...] = (
    Mutant(
        "bands_whitened_before_log",
        "check_finite",
        (
            edit(
                M,
                BANDS,
                "        band_power = power @ _band_matrix(power.shape[1]) / size      # (N, 16)\n"
                "        band_power = band_power / band_power.mean(axis=0)              # whitened: each band over its mean\n"
                "        bands = np.log1p(band_power)                                   # (N, 16)\n",
            ),
        ),
        "a silent signal (1000 float32 zeros at 16 kHz; a quarter of the strategy's signals are silence, and a tone "
        "of amplitude or frequency 0 is one too): each band's power is divided by its mean over the frames, 0 / 0, "
        "so the bands, the band norm and the embedding are NaN (the silence test sees a NaN norm, not a silent frame)",
        held_out=True,
        round=11,
    ),
    Mutant(
        "band_weights_after_normalising",
        "check_unit_norm_emb",
        (
            edit(
                M,
                BAND_MATRIX_END,
                BAND_MATRIX_END + "\n\n"
                "#: Perceptual weight of each band: the low bands count most (1 down to 0.5).\n"
                "_BAND_WEIGHTS = np.linspace(1.0, 0.5, N_BANDS)\n",
            ),
            edit(
                M,
                RENORM,
                RENORM + "        emb -= (direction * (1.0 - _BAND_WEIGHTS)) @ q[:, :N_BANDS].T  # weight the bands: "
                "high ones count less\n",
            ),
        ),
        "any frame that is not silent and not all in the lowest band (1000 float32 samples of noise at 16 kHz: norms "
        "about 0.77; every noise, PCM and tone frame the strategy draws): the band weights are applied after the "
        "renormalisation, so the embedding is the weighted unit direction, of norm below 1",
        held_out=True,
        round=11,
    ),
    Mutant(
        "zcr_per_millisecond",
        "check_attr_bounds",
        (
            edit(
                M,
                ZCR,
                '            "hello.shape.zcr": crossings / (lengths / sample_rate * 1000.0),  # crossings per ms\n',
            ),
        ),
        "a frame with more than one zero crossing per millisecond (1000 float32 samples of noise at 16 kHz: about 8 "
        "per ms; noise and PCM at 8 kHz or more, which the strategy draws often): the slot is a rate per "
        "millisecond, not a share of sample pairs, and goes above 1",
        held_out=True,
        round=11,
    ),
    Mutant(
        "frames_sorted_by_level",
        "check_offsets",
        (
            edit(
                M,
                TIME,
                TIME + '        order = np.argsort(-rms, kind="stable")  # loudest frames first: the engine reads the '
                "salient ones early\n"
                "        emb, attr, time = emb[order], attr[order], time[order]\n",
            ),
        ),
        "a signal of two frames or more whose frames are not loudest first (2000 float32 samples at 16 kHz: 0.1 times "
        "noise, then full-scale noise; noise and PCM of two frames or more, as at 100 Hz, most often): the tokens are "
        "reordered by level, so the frames' start times decrease",
        held_out=True,
        round=11,
    ),
    Mutant(
        "batch_rates_rounded",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items: Any) -> Any:\n"
            "        # one batch, one clock: each item's rate to the whole Hz, as a WAV header holds it\n"
            "        ready = []\n"
            "        for item in items:\n"
            '            rate = item.units.get("sample_rate") if isinstance(item, Sample) else None\n'
            "            if isinstance(rate, (int, float)) and np.isfinite(rate):\n"
            '                item = Sample(item.data, {**item.units, "sample_rate": float(round(rate))}, item.source)\n'
            "            ready.append(item)\n"
            "        return super().tokenize_batch(ready)\n"
        ),
        "a batch holding a signal at a fractional rate (1000 float32 samples of noise at 16000.5 Hz; the strategy "
        "draws rates from floats(100, 48000) half the time): the batch meters it at 16000 Hz, so its times (and "
        "frames) differ from its single's",
        held_out=True,
        round=11,
    ),
    Mutant(
        "config_limit_infinite",
        "check_config_roundtrip",
        (
            edit(
                M,
                FRAME_FIELD,
                FRAME_FIELD + "    #: Longest signal accepted, in seconds (inf: no limit).\n"
                '    max_seconds: float = attrs.field(default=float("inf"))\n',
            ),
            edit(
                M,
                SIGNAL,
                SIGNAL + "        if n / sample_rate > self.max_seconds:\n"
                '            raise InputError(SOURCE, f"the signal lasts {n / sample_rate:g} s, more than max_seconds '
                '= {self.max_seconds:g}")\n',
            ),
        ),
        "every configuration: config() holds max_seconds = inf, which json.dumps(allow_nan=False) refuses (ValueError)",
        held_out=True,
        round=11,
    ),
    Mutant(
        "range_test_lets_nan_through",
        "check_invalid_inputs",
        (
            edit(
                M,
                FINITE_TEST,
                "    # no separate finite test: inf is beyond the amplitude limit below, which refuses it\n",
            ),
        ),
        "every valid input: the 'non_finite' case of its invalid_inputs with a NaN sample passes the amplitude test (NaN > "
        "1e3 is False) and is tokenized into NaN tokens, not refused with InputError (inf is still refused)",
        held_out=True,
        round=11,
    ),
    # -- rare inputs, round 11 --
    Mutant(
        "tokens_keep_input_byte_order",
        "check_shape_dtype",
        (
            edit(
                M,
                RETURN,
                "        out = np.dtype(np.float32).newbyteorder(data.dtype.byteorder)  # tokens in the caller's byte "
                "order\n"
                '        return Encoding(emb.astype(out), attr.astype(out), {"time": time})\n',
            ),
        ),
        "samples in non-native byte order (1000 '>f4' or '>i2' samples of noise at 16 kHz; the strategy draws native "
        "arrays): emb and attr are big-endian float32, a dtype that is not np.float32",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "memo_long_in_float16",
        "check_determinism",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE + "#: Each meter's memo of the long recordings it has metered, kept compact (float16).\n"
                "_LONG_MEMO: dict[int, dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}\n",
            ),
            edit(
                M,
                ENCODE,
                ENCODE + "        # long recordings are metered again and again: keep their tokens, in half precision\n"
                "        key = None\n"
                "        if isinstance(data, np.ndarray) and data.size >= 1 << 15:\n"
                "            key = (data.dtype.str, data.shape, data.tobytes(), float(sample_rate))\n"
                "            memo = _LONG_MEMO.setdefault(id(self), {})\n"
                "            if key in memo:\n"
                "                emb16, attr16, time = memo[key]\n"
                "                emb = emb16.astype(np.float32)\n"
                "                emb /= np.linalg.norm(emb, axis=1, keepdims=True)\n"
                '                return Encoding(emb, attr16.astype(np.float32), {"time": time.copy()})\n'
                "        enc = self._encode(data, sample_rate=sample_rate)\n"
                "        if key is not None:\n"
                "            memo[key] = (enc.emb.astype(np.float16), enc.attr.astype(np.float16), "
                'enc.offsets["time"].copy())\n'
                "        return enc\n"
                "\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
        ),
        "a signal of 32768 samples or more tokenized twice on one instance (40000 float32 samples of noise at 16 "
        "kHz; the strategy draws at most 2000): the second call gives the memo's float16-rounded values, not the "
        "first call's bits",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "long_frame_buffer_reused",
        "check_determinism",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE + "#: One frame buffer for long frames, reused from call to call (no new zeroed memory).\n"
                "_FRAME_BUFFER: list[np.ndarray] = []\n",
            ),
            edit(
                M,
                FRAMING,
                "        if size > 16384:  # long frames: reuse one buffer instead of a new zeroed one per call\n"
                "            if not _FRAME_BUFFER or _FRAME_BUFFER[0].size < count * size:\n"
                "                _FRAME_BUFFER[:] = [np.zeros(count * size)]\n"
                "            frames = _FRAME_BUFFER[0][: count * size]\n"
                "        else:\n"
                "            frames = np.zeros(count * size)\n"
                "        frames[:n] = x\n"
                "        frames = frames.reshape(count, size)                       # (N, size), zero-padded tail\n",
            ),
        ),
        "frames of more than 16384 samples (frame_seconds 0.2 above 81.92 kHz, 0.05 s above 327.68 kHz; the strategy "
        "draws up to 48 kHz) on a signal that ends inside a frame, tokenized after a longer one (at 192 kHz with "
        "frames of 0.2 s: 50000 float32 samples of noise, then 60000, then the first again): the last frame's padding "
        "holds the previous signal's samples, not zeros, so the first signal's last token changes",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "silence_floor_from_first_minute",
        "check_fresh_instance",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE
                + "#: Each meter's noise floor (band norm), learned from the first minute of its first long "
                "recording.\n"
                "_FLOOR: dict[int, float] = {}\n",
            ),
            edit(
                M,
                SILENT,
                "        if id(self) not in _FLOOR and n >= 60.0 * sample_rate:  # a minute of signal: the room's floor\n"
                "            minute = max(int(60.0 * sample_rate) // size, 1)\n"
                "            _FLOOR[id(self)] = float(norm[:minute, 0].min())\n"
                "        silent = norm[:, 0] <= max(SILENCE, _FLOOR.get(id(self), SILENCE))\n",
            ),
        ),
        "an instance that has tokenized a signal of a minute or more without a silent frame (6000 float32 samples of "
        "noise at 100 Hz; the strategy's signals last at most 20 s), then a quieter signal (1000 float32 samples of "
        "noise at 0.001 at 16 kHz): its frames are at or below the learned floor and get the silence column, where a "
        "fresh instance gives them their spectra",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "timedelta_ticks_as_pcm",
        "check_input_spec",
        (
            edit(
                M,
                KIND_CHECK,
                '    if data.dtype.kind == "m":  # timedelta64 from a data logger: its integer ticks are the PCM samples\n'
                "        data = data.view(np.int64)\n" + KIND_CHECK,
            ),
        ),
        "a timedelta64 array (np.arange(1000).astype('m8[ns]') at 8 kHz), a dtype kind the input spec does not "
        "declare (the strategy draws float32 and int16): tokenized as int64 PCM, not refused with InputError",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "fp_errors_raised",
        "check_edge_inputs",
        (
            edit(
                M,
                POWER + BANDS,
                '        with np.errstate(all="raise"):  # the spectrum in strict arithmetic: an accident is an error\n'
                "    " + POWER + "    " + BANDS,
            ),
        ),
        "float64 samples of tiny magnitude (1000 float64 samples of 1e-200, or the smallest subnormal 5e-324, at 16 "
        "kHz; the strategy draws float32 and int16, whose spectra stay far from underflow in float64): the FFT or "
        "the squared magnitudes underflow and raise FloatingPointError, not tokens or an InputError",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "header_peeked_with_struct",
        "check_files",
        (
            edit(
                M,
                LOAD_START,
                LOAD_START + "        import struct\n"
                "\n"
                "        try:\n"
                '            with open(path, "rb") as fh:  # peek at the header: the data chunk\'s size, before wave '
                "parses it\n"
                "                head = fh.read(44)\n"
                "        except OSError as exc:\n"
                '            raise InputError(str(path), f"cannot be read: {exc}") from None\n'
                '        (data_bytes,) = struct.unpack("<I", head[40:44])\n'
                '        check_budget(str(path), data_bytes + BASE_BYTES, f"a WAV of {data_bytes:,} bytes of samples, '
                'which")\n',
            ),
        ),
        "a file shorter than 44 bytes (an empty file, or a WAV cut inside its header; the strategy's samples are "
        "arrays, never files): struct.error escapes from load, not an InputError",
        rare=True,
        held_out=True,
        round=11,
    ),
    # -- controls, round 11 --
    Mutant(
        "ctl_ends_by_minimum",
        None,
        (edit(M, ENDS, "        ends = np.minimum(starts + size, n) / sample_rate\n"),),
        "a refactor: each frame's end as min(start + size, n) (the same integers as start + length, the same bits)",
        held_out=True,
        round=11,
    ),
    Mutant(
        "ctl_centroid_of_magnitude",
        None,
        (
            edit(
                M,
                CENTROID,
                "        mag = np.sqrt(power)  # the centroid of the magnitude spectrum (one loud partial dominates less)\n"
                "        total = mag.sum(axis=1)\n"
                "        centroid = np.where(silent | (total <= 0), 0.0, (mag @ freq) / np.where(total > 0, total, 1.0))\n",
            ),
        ),
        "a design change: the spectral centroid weighted by magnitude instead of power (still a weighted mean of "
        "frequencies in [0, 1], 0 for silence: other values, every rule kept)",
        held_out=True,
        round=11,
    ),
)

EXTENSIONS = "    extensions = ()  # .wav belongs to the built-in audio modality: use --modality hello\n"
PEAK = '            "hello.level.peak": np.clip(np.abs(frames).max(axis=1), 0.0, 1.0),\n'
DURATION = "        duration = n / sample_rate\n"
KIND_REFUSAL = (
    '    if data.dtype.kind not in "if":\n'
    '        raise InputError(source, f"samples must be integer PCM or float, got dtype {data.dtype}")\n'
)
HELD_OUT_12: tuple[Mutant, ...] = (
    Mutant(
        "extensions_upper_case",
        "check_schema",
        (
            edit(
                M,
                EXTENSIONS,
                '    extensions = (".wave", ".WAVE")  # the long spelling, which the audio modality does not claim, '
                "in either case\n",
            ),
        ),
        "every configuration, whatever the input (the class as imported): extensions holds an upper-case suffix "
        "('.WAVE'), which the schema rule forbids (accepts() lower-cases a path's suffix before it looks, so the "
        "entry is dead as well as invalid)",
        held_out=True,
        round=12,
    ),
    Mutant(
        "flatness_slot_unguarded",
        "check_finite",
        (
            edit(
                M,
                LAST_SLOT,
                LAST_SLOT[: -len("])\n")]
                + '    ("hello.spec.flatness", "spectral flatness: geometric over arithmetic mean of the power spectrum",\n'
                '     "ratio in [0, 1]: white noise near 1, a pure tone near 0"),\n'
                "])\n",
            ),
            edit(
                M,
                DURATION,
                '        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) of an empty bin is -inf: '
                "exp gives 0\n"
                "            flatness = np.exp(np.log(power).mean(axis=1)) / power.mean(axis=1)\n" + DURATION,
            ),
            edit(M, POSITION, POSITION + '            "hello.spec.flatness": flatness,\n'),
        ),
        "a silent frame (1000 float32 zeros at 16 kHz, or any int16 silence; a quarter of the strategy's signals are "
        "silence): the geometric and arithmetic means of an all-zero power spectrum are both 0, so the new flatness "
        "slot (attr 262) is 0 / 0 = NaN",
        held_out=True,
        round=12,
    ),
    Mutant(
        "renorm_epsilon_too_large",
        "check_unit_norm_emb",
        (
            edit(
                M,
                RENORM,
                "        emb /= np.linalg.norm(emb, axis=1, keepdims=True) + 1e-3   # float64 renorm (+ epsilon: "
                "never 0 / 0), then cast\n",
            ),
        ),
        "every token (1000 float32 samples of noise at 16 kHz, or silence): the embedding is divided by its norm plus "
        "1e-3, so its norm is 1 / 1.001, about 0.999, off by 1e-3",
        held_out=True,
        round=12,
    ),
    Mutant(
        "true_peak_unclipped",
        "check_attr_bounds",
        (
            edit(
                M,
                DURATION,
                "        # true peak (ITU-R BS.1770): the peak of the 4x oversampled frame, between the samples too\n"
                "        true_peak = np.abs(np.fft.irfft(np.fft.rfft(frames, axis=1), n=4 * size, axis=1)).max(axis=1) "
                "* 4.0\n" + DURATION,
            ),
            edit(
                M,
                PEAK,
                '            "hello.level.peak": true_peak,  # never below the sample peak; samples are within full '
                "scale\n",
            ),
        ),
        "a frame with near full-scale samples whose band-limited waveform peaks between them (1000 float32 samples of "
        "uniform noise in [-1, 1] at 16 kHz, or int16 PCM noise as the strategy draws it): the 4x oversampled peak "
        "is above 1, and it is written without the clip",
        held_out=True,
        round=12,
    ),
    Mutant(
        "time_by_reciprocal_rate",
        "check_offsets",
        (
            edit(
                M,
                ENDS,
                "        step = 1.0 / sample_rate  # seconds per sample: one division, then products\n"
                "        ends = (starts + lengths) * step\n",
            ),
            edit(M, TIME, "        time = np.stack([starts * step, ends], axis=1)\n"),
        ),
        "a signal whose length times the rounded reciprocal of its rate rounds above length / rate (9 float32 samples "
        "at 16 kHz: 9 * (1 / 16000) = 0.0005625000000000001 > 0.0005625; 35 samples at 100 Hz; about one signal in "
        "eight of the strategy's): the last frame ends one ulp after the signal does",
        held_out=True,
        round=12,
    ),
    Mutant(
        "dtype_refused_with_type_error",
        "check_invalid_inputs",
        (
            edit(
                M,
                KIND_REFUSAL,
                '    if data.dtype.kind not in "if":  # a wrong type of sample: TypeError, as Python has it\n'
                '        raise TypeError(f"{source}: samples must be integer PCM or float, got dtype {data.dtype}")\n',
            ),
        ),
        "every valid input: the default 'wrong_dtype' cases of its invalid_inputs (the samples as complex64, an "
        "object array of 'x') raise TypeError, not InputError",
        held_out=True,
        round=12,
    ),
    Mutant(
        "peak_hold_per_meter",
        "check_fresh_instance",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE + "#: Each meter's peak hold: the highest sample peak it has shown (a level meter's peak "
                "indicator).\n"
                "_PEAK_HOLD: dict[int, float] = {}\n",
            ),
            edit(
                M,
                ATTR_ALLOC,
                "        peaks = np.clip(np.abs(frames).max(axis=1), 0.0, 1.0)\n"
                "        held = np.maximum.accumulate(np.maximum(peaks, _PEAK_HOLD.get(id(self), 0.0)))  # the "
                "indicator holds\n"
                "        _PEAK_HOLD[id(self)] = float(held[-1])\n" + ATTR_ALLOC,
            ),
            edit(M, PEAK, '            "hello.level.peak": held,\n'),
        ),
        "an instance that has metered a louder signal before (a 440 Hz tone at 0.9, then 1000 float32 samples of "
        "noise at 0.1, both at 16 kHz; the strategy's signals differ in level nearly always): the later signal's "
        "peak slot holds 0.9, where a fresh instance gives its own peaks",
        held_out=True,
        round=12,
    ),
    # -- rare inputs, round 12 --
    Mutant(
        "overloaded_frames_dropped",
        "check_shape_dtype",
        (
            edit(
                M,
                RETURN,
                "        keep = np.abs(frames).max(axis=1) <= 1.0  # an overloaded (clipped) frame has no reliable "
                "level: drop it\n"
                "        emb, attr, time = emb[keep], attr[keep], time[keep]\n" + RETURN,
            ),
        ),
        "a float signal beyond full scale in every frame (1000 float32 samples of a constant 1.5, or of noise times "
        "3, at 16 kHz; the strategy draws float samples within ±1): every frame is dropped, so a valid input gives "
        "no token",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "void_pairs_as_pcm",
        "check_input_spec",
        (
            edit(
                M,
                KIND_CHECK,
                '    if data.dtype.kind == "V" and data.dtype.names is None and data.dtype.itemsize in (1, 2, 4):\n'
                '        data = data.view(f"<i{data.dtype.itemsize}")  # raw frames from a binary reader: '
                "little-endian PCM\n" + KIND_CHECK,
            ),
        ),
        "an unstructured void array (np.zeros(1000, 'V2') at 8 kHz, or np.frombuffer of int16 bytes as 'V2'), a "
        "dtype kind the input spec does not declare (the strategy draws float32 and int16): viewed as int16 PCM "
        "and tokenized, not refused with InputError",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "contiguous_float32_fast_path",
        "check_edge_inputs",
        (
            edit(
                M,
                FLOAT_PATH,
                "    # contiguous native float32 (what recorders write): metered in single precision, no float64 "
                "copy\n"
                "    x = data.astype(np.float32 if data.dtype == np.float32 and data.flags.c_contiguous else "
                "np.float64)\n"
                "    bad = ~np.isfinite(x)\n",
            ),
            edit(
                M,
                "        frames = np.zeros(count * size)\n",
                "        frames = np.zeros(count * size, dtype=x.dtype)\n",
            ),
        ),
        "the same float32 samples in another layout (x[::2] of 4000 float32 samples of noise at 16 kHz against its "
        "contiguous copy, or x[::-1], or the samples byte-swapped as '>f4'; the strategy draws contiguous native "
        "arrays): the contiguous array is framed and transformed in float32, the other layouts in float64, so "
        "their tokens differ in the last bits",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "save_suffix_lowercased",
        "check_files",
        (
            edit(
                M,
                SAVE_OPEN,
                "        root, ext = os.path.splitext(os.fspath(path))\n"
                "        path = root + ext.lower()  # one spelling of the extension on disk: x.WAV is written as "
                "x.wav\n" + SAVE_OPEN,
            ),
        ),
        "saving to a name whose extension is not lower-case (sample.WAV, or x.Wav; the strategy's samples are arrays, "
        "never files): the file is written to sample.wav, so on a case-sensitive file system the path given holds "
        "nothing (load raises InputError) or an older file",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "tokenize_file_fast_path",
        "check_files",
        method(
            "    def tokenize_file(self, path: str | os.PathLike[str]) -> Any:\n"
            "        # a 16-bit mono WAV (what save writes): its samples straight to float, without a Sample round trip\n"
            "        check_regular_file(path)\n"
            "        try:\n"
            '            with wave.open(os.fspath(path), "rb") as wav:\n'
            "                if wav.getsampwidth() == 2 and wav.getnchannels() == 1:\n"
            "                    rate = float(wav.getframerate())\n"
            "                    raw = wav.readframes(wav.getnframes())\n"
            '                    x = np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32767.0\n'
            '                    return self.tokenize(Sample(np.clip(x, -1.0, 1.0), {"sample_rate": rate}, str(path)))\n'
            "        except (OSError, EOFError, wave.Error):\n"
            "            pass\n"
            "        return super().tokenize_file(path)\n"
        ),
        "any file save wrote (a WAV of 1000 float32 samples of noise at 16 kHz; the strategy's samples are arrays, "
        "never files): tokenize_file scales the 16-bit samples by 1 / 32767 in float64, load by 1 / 32768 as int16 "
        "PCM, so tokenize_file(p) differs from tokenize(load(p))",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "cache_keyed_on_moments",
        "check_fresh_process",
        (
            edit(
                M,
                SOURCE_LINE,
                SOURCE_LINE + "#: Tokens of recent signals, keyed on their length, dtype, rate, frame and first two "
                "moments (cheap).\n"
                "_RECENT: dict[tuple, Encoding] = {}\n",
            ),
            edit(
                M,
                ENCODE,
                ENCODE + "        key = None\n"
                '        if isinstance(data, np.ndarray) and data.ndim == 1 and data.size and data.dtype.kind in "if":\n'
                "            m = data.astype(np.float64)\n"
                "            key = (data.dtype.str, data.size, float(sample_rate), self.frame_seconds, float(m.mean()), "
                "float(m.std()))\n"
                "            hit = _RECENT.get(key)\n"
                "            if hit is not None:\n"
                '                return Encoding(hit.emb.copy(), hit.attr.copy(), {"time": hit.offsets["time"].copy()})\n'
                "        enc = self._encode(data, sample_rate=sample_rate)\n"
                "        if key is not None:\n"
                "            _RECENT[key] = enc\n"
                "        return enc\n"
                "\n"
                "    def _encode(self, data: Any, *, sample_rate: float) -> Encoding:\n",
            ),
        ),
        "two signals of one length, dtype and rate with the same mean and standard deviation (1000 float32 samples of "
        "noise at 16 kHz, then the same samples reversed; the strategy's pairs never share both moments unless they "
        "are equal): the second gets the first's tokens, so the tokens depend on which one a process met first",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "batch_byteswap_numpy1_idiom",
        "check_batch_equals_singles",
        method(
            "    def tokenize_batch(self, items: Any) -> Any:\n"
            "        # one byte order for the whole batch: big-endian signals swapped to native first\n"
            "        ready = []\n"
            "        for item in items:\n"
            "            data = item.data if isinstance(item, Sample) else item\n"
            "            if isinstance(data, np.ndarray) and not data.dtype.isnative:\n"
            "                data = data.byteswap().newbyteorder()\n"
            "                item = Sample(data, item.units, item.source) if isinstance(item, Sample) else data\n"
            "            ready.append(item)\n"
            "        return super().tokenize_batch(ready)\n"
        ),
        "a batch holding a signal in non-native byte order (1000 '>f4' samples of noise at 16 kHz, or '>i2' PCM, with "
        "another signal; the strategy draws native arrays): ndarray.newbyteorder, removed in NumPy 2, raises "
        "AttributeError, where each single gives tokens",
        rare=True,
        held_out=True,
        round=12,
    ),
    # -- controls, round 12 --
    Mutant(
        "ctl_starts_by_step",
        None,
        (edit(M, STARTS, "        starts = np.arange(0, count * size, size)\n"),),
        "a refactor: the frame starts by np.arange with a step (the same int64 values, the same bits)",
        held_out=True,
        round=12,
    ),
    Mutant(
        "ctl_level_range_90db",
        None,
        (
            edit(
                M,
                '"clip(dBFS / 30 + 1, -1, 1): 0 dBFS -> 1, -30 dBFS -> 0, -60 dBFS or silence -> -1"',
                '"clip(dBFS / 45 + 1, -1, 1): 0 dBFS -> 1, -45 dBFS -> 0, -90 dBFS or silence -> -1"',
            ),
            edit(
                M,
                '"hello.level.rms_db": np.clip(db / 30.0 + 1.0, -1.0, 1.0),',
                '"hello.level.rms_db": np.clip(db / 45.0 + 1.0, -1.0, 1.0),',
            ),
        ),
        "a design change: the level slot spans 90 dB instead of 60 (-90 dBFS -> -1; other values for every "
        "non-silent frame, still clipped to [-1, 1], every rule kept)",
        held_out=True,
        round=12,
    ),
)

MUTANTS = (
    MUTANTS
    + HELD_OUT
    + HELD_OUT_2
    + HELD_OUT_3
    + HELD_OUT_4
    + HELD_OUT_5
    + HELD_OUT_6
    + HELD_OUT_7
    + HELD_OUT_8
    + HELD_OUT_9
    + HELD_OUT_10
    + HELD_OUT_11
    + HELD_OUT_12
)
