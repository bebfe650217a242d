"""Mutants of the built-in ``vision`` modality (plugins/v22sdk_vision), default and 2×2 grid.

Its ``sample_inputs()`` is broad: 1×1 to 128×128 images, grey/grey+alpha/RGB/RGBA, uint8, uint16,
float32, float64 and bool, constant, noise, gradients, discs and stripes. Rare for it: images
larger than 1024 pixels (the downscale path), float16, arrays in non-native byte order or other
layouts, and files.
"""

from __future__ import annotations

from . import ROOT, Mutant, Target, edit

TARGET = Target(
    name="vision",
    package="v22sdk_vision",
    folder=ROOT / "plugins" / "v22sdk_vision",
    cls="v22sdk_vision.modality:VisionModality",
    configs=({}, {"grid": 2}),
)

M, P, E = "modality.py", "pixels.py", "embed.py"
ENCODE = "    def encode(self, data: Any, **units: float) -> Encoding:\n        from .embed import embed\n"

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "global_box_hw_swapped",
        "check_offsets",
        (
            edit(
                M,
                "crops = [(rgb, np.array([0, 0, width, height], dtype=np.int64))]",
                "crops = [(rgb, np.array([0, 0, height, width], dtype=np.int64))]",
            ),
        ),
        "a non-square image: the box reaches past the narrow side",
    ),
    Mutant(
        "grid_box_swapped",
        "check_offsets",
        (
            edit(
                M,
                "box = np.array([xs[c, 0], ys[r, 0], xs[c, 1], ys[r, 1]], dtype=np.int64)",
                "box = np.array([ys[r, 0], xs[c, 0], ys[r, 1], xs[c, 1]], dtype=np.int64)",
            ),
        ),
        "the grid configuration only, on non-square images",
        rare=True,
    ),
    Mutant(
        "kmeans_unseeded",
        "check_determinism",
        (edit("colour.py", "    cv2.setRNGSeed(KMEANS_SEED)", "    pass"),),
        "images with several colours: k-means++ draws from OpenCV's unseeded RNG",
    ),
    Mutant(
        "hue_histogram_unguarded",
        "check_finite",
        (
            edit(
                "colour.py",
                "    if n_col:\n        # truncation to uint8",
                "    if True:\n        # truncation to uint8",
            ),
        ),
        "an image without a saturated pixel (grey): the hue histogram divides 0 by 0",
    ),
    Mutant(
        "int16_accepted",
        "check_input_spec",
        (
            edit(
                P,
                "_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}",
                "_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0, np.dtype(np.int16): 32767.0}",
            ),
        ),
        "int16 pixels, which the input spec does not declare, are accepted (and negative ones scaled below 0)",
        rare=True,
    ),
    Mutant(
        "black_unguarded",
        "check_finite",
        (
            edit(
                E,
                "    if norm < 1e-12:\n        v = blank_direction()\n    else:\n        v = v / norm\n",
                "    v = v / norm\n",
            ),
        ),
        "an all-black image: 0/0",
    ),
    Mutant(
        "float32_bytes_viewed",
        "check_determinism",
        (
            edit(
                P,
                "        x = array.astype(np.float32, copy=False)\n",
                "        # float32 already: view it, no copy\n"
                "        x = array.view(np.float32) if array.dtype.itemsize == 4 else array.astype(np.float32, copy=False)\n",
            ),
        ),
        "float32 pixels in non-native byte order are read as garbage",
        rare=True,
        equivalent="since the pre-registered run, check_array converts every array to native byte order before "
        "this view, so the bytes it views are native: no input gives other tokens",
    ),
    Mutant(
        "attr_float64",
        "check_shape_dtype",
        (edit(M, "attr = np.zeros((n, ATTR_DIM), dtype=np.float32)", "attr = np.zeros((n, ATTR_DIM))"),),
        "every input",
    ),
    Mutant(
        "cache_keyed_on_shape",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        key = (np.shape(data), str(getattr(data, 'dtype', '')), self.grid)\n"
                "        if key not in _CACHE:  # tokenizing is pure, so cache it\n"
                "            _CACHE[key] = self._encode(data)\n"
                "        return _CACHE[key]\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_CACHE: dict = {}\n"),
        ),
        "a second, different image of the same shape and dtype (consistent within a process)",
    ),
    Mutant(
        "from_config_ignores_grid",
        "check_config_roundtrip",
        (
            edit(
                M,
                "    def load(self, path",
                "    @classmethod\n    def from_config(cls, config):\n        return cls()\n\n    def load(self, path",
            ),
        ),
        "the grid configuration only",
        rare=True,
    ),
    Mutant(
        "rotated_by_file_name",
        "check_files",
        (
            edit(
                M,
                "        return Sample(data=load_image(path), units={}, source=str(path))\n",
                "        image = load_image(path)\n"
                "        if 'rotated' in os.path.basename(str(path)).lower():  # phone exports say so in the name\n"
                "            image = np.ascontiguousarray(np.rot90(image))\n"
                "        return Sample(data=image, units={}, source=str(path))\n",
            ),
        ),
        "a file whose name says 'rotated'",
        rare=True,
    ),
    Mutant(
        "empty_image_accepted",
        "check_invalid_inputs",
        (edit(P, "    if array.shape[0] == 0 or array.shape[1] == 0:\n", "    if False:\n"),),
        "an empty image crashes in OpenCV instead of raising InputError",
    ),
    Mutant(
        "five_channels_accepted",
        "check_invalid_inputs",
        (
            edit(
                P,
                "    if array.ndim == 3 and array.shape[2] not in (1, 2, 3, 4):\n",
                "    if array.ndim == 3 and array.shape[2] not in (1, 2, 3, 4, 5):\n",
            ),
        ),
        "a 5-channel array is not rejected",
    ),
    # -- controls: must survive ------------------------------------------------------------------
    Mutant(
        "ctl_cache_keyed_on_data",
        None,
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        import hashlib\n"
                "        if isinstance(data, np.ndarray) and data.dtype.kind in 'biuf':\n"
                "            key = (hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest(),\n"
                "                   data.dtype.str, data.shape, self.grid)\n"
                "            if key not in _CACHE:\n"
                "                _CACHE[key] = self._encode(data)\n"
                "            hit = _CACHE[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {'box': hit.offsets['box'].copy()})\n"
                "        return self._encode(data)\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_CACHE: dict = {}\n"),
        ),
        "a correct cache keyed on the pixels' bytes, dtype, shape and configuration",
    ),
    Mutant(
        "ctl_refuses_huge",
        None,
        (
            edit(
                P,
                "    if array.shape[0] == 0 or array.shape[1] == 0:\n",
                "    if max(array.shape[:2]) > 3000:\n"
                "        raise InputError(source, f'images up to 3000 pixels a side, got shape {array.shape}')\n"
                "    if array.shape[0] == 0 or array.shape[1] == 0:\n",
            ),
        ),
        "a stricter plugin: images over 3000 pixels a side are refused with InputError",
    ),
    Mutant(
        "ctl_copy_crops",
        None,
        (edit(M, "crops.append((np.ascontiguousarray(crop), box))", "crops.append((crop.copy(), box))"),),
        "an equivalent copy of each crop",
    ),
)

# -- held out: written after the kit's version-2 checks were frozen, committed before their first run --
HELD_OUT: tuple[Mutant, ...] = (
    Mutant(
        "big_float16_not_converted",
        "check_edge_inputs",
        (
            edit(
                P,
                "        elif array.dtype == np.float16:  # OpenCV cannot resize float16\n"
                "            array = array.astype(np.float32)\n",
                "",
            ),
        ),
        "a float16 image larger than 1024 pixels: OpenCV cannot resize float16",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "big_bool_not_converted",
        "check_edge_inputs",
        (
            edit(
                P,
                '        if array.dtype.kind == "b":\n            array = array.astype(np.uint8) * np.uint8(255)\n'
                "        elif array.dtype == np.float16:",
                "        if array.dtype == np.float16:",
            ),
        ),
        "a bool image larger than 1024 pixels: OpenCV cannot resize bool",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "grid_empty_patches",
        "check_offsets",
        (edit(M, "    stops = np.maximum(stops, starts + 1)\n", ""),),
        "the grid configuration on an image narrower or lower than the grid",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "boxes_float",
        "check_offsets",
        (
            edit(
                M,
                "boxes = np.stack([box for _crop, box in crops])",
                "boxes = np.stack([box for _crop, box in crops]).astype(np.float64)",
            ),
        ),
        "every input: boxes in float",
        held_out=True,
    ),
    Mutant(
        "uint_bytes_reinterpreted",
        "check_determinism",
        (
            edit(
                P,
                "        x = array.astype(np.float32)\n        x *= np.float32(1.0 / _SCALE[array.dtype])",
                "        x = np.frombuffer(array.tobytes(), dtype=array.dtype.name).reshape(array.shape).astype(np.float32)\n"
                "        x *= np.float32(1.0 / _SCALE[array.dtype])",
            ),
        ),
        "uint16 pixels in non-native byte order are read as native",
        rare=True,
        held_out=True,
        equivalent="since the pre-registered run, check_array converts every array to native byte order before "
        "this line, so the bytes it reads are native: no input gives other tokens",
    ),
    Mutant(
        "two_channel_alpha_ignored",
        "check_shape_dtype",
        (
            edit(
                P,
                "    if channels in (2, 4):  # colour + alpha: composite over the background\n",
                "    if channels == 4:  # colour + alpha: composite over the background\n",
            ),
        ),
        "a grey + alpha image: two channels reach OpenCV's colour conversion",
        held_out=True,
    ),
    Mutant(
        "float_clipped_in_place",
        "check_determinism",
        (
            edit(
                P,
                "        x = array.astype(np.float32, copy=False)\n",
                "        x = array.astype(np.float32, copy=False)\n"
                "        np.clip(x, 0.0, 1.0, out=x)  # guard the range\n",
            ),
        ),
        "float32 pixels are clipped in the caller's own array: a read-only array crashes",
        rare=True,
        held_out=True,
    ),
    Mutant(
        "float16_nan_unchecked",
        "check_input_spec",
        (
            edit(
                P,
                '    if kind == "f":\n        if not np.isfinite(array).all():',
                '    if kind == "f" and array.dtype != np.float16:\n        if not np.isfinite(array).all():',
            ),
        ),
        "NaN in a float16 image is not rejected",
        rare=True,
        held_out=True,
    ),
    # The pre-registered control tested `array.dtype == np.float16`, False for big-endian float16: it
    # refused float16 in one byte order and tokenized it in the other, and the kit killed it (rightly).
    # Corrected after the run: it now refuses float16 in any byte order.
    Mutant(
        "ctl_refuses_float16",
        None,
        (
            edit(
                P,
                '    if kind == "f" and array.dtype.itemsize > 8:',
                '    if kind == "f" and array.dtype.itemsize == 2:\n'
                '        raise InputError(source, "float16 pixels are not supported; use float32")\n'
                '    if kind == "f" and array.dtype.itemsize > 8:',
            ),
        ),
        "a stricter plugin: float16 refused with InputError (float32 and float64 still taken)",
        held_out=True,
    ),
)

# -- post hoc: added after the pre-registered run (docs/contract-kit.md says why) ---------------
POST_HOC: tuple[Mutant, ...] = (
    Mutant(
        "byte_order_not_normalised",
        "check_determinism",
        (
            edit(
                P,
                "    if not array.dtype.isnative:  # big-endian TIFF or network data: same values, native order\n"
                '        array = array.astype(array.dtype.newbyteorder("="))\n',
                "",
            ),
        ),
        "uint16 pixels in non-native byte order are refused (float ones taken): the pre-registered survivor's bug "
        "class, on the fixed source",
        rare=True,
        post_hoc=True,
    ),
)

# -- held out, round 2: written after the first round's post-hoc fixes, committed with their
# criterion (scripts/mutation_score.py, CRITERION_2) before any run of the kit against them --
INVALID = "    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:\n"
HELD_OUT_2: tuple[Mutant, ...] = (
    Mutant(
        "grid_crops_original_coords",
        "check_edge_inputs",
        (
            edit(
                M,
                "crop = rgb[ys_w[r, 0] : ys_w[r, 1], xs_w[c, 0] : xs_w[c, 1]]",
                "crop = rgb[ys[r, 0] : ys[r, 1], xs[c, 0] : xs[c, 1]]",
            ),
        ),
        "the grid configuration on an image over 1024 pixels a side: patches cut in input pixels from the "
        "downscaled image are empty, and OpenCV raises",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "dark_norm_floor",
        "check_unit_norm_emb",
        (
            edit(
                E,
                "    else:\n        v = v / norm\n",
                "    else:\n        v = v / max(norm, 1e-3)  # a floor against noise in near-black thumbnails\n",
            ),
        ),
        "a near-black image (projected thumbnail norm between 1e-12 and 1e-3, e.g. float16 subnormal pixels): emb "
        "shorter than 1",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "grid_box_xywh",
        "check_offsets",
        (
            edit(
                M,
                "box = np.array([xs[c, 0], ys[r, 0], xs[c, 1], ys[r, 1]], dtype=np.int64)",
                "box = np.array([xs[c, 0], ys[r, 0], xs[c, 1] - xs[c, 0], ys[r, 1] - ys[r, 0]], dtype=np.int64)  # x, y, w, h",
            ),
        ),
        "the grid configuration only: a patch's box as x, y, width, height (empty or reversed past the first patch)",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "thin_downscale_zero_side",
        "check_edge_inputs",
        (
            edit(
                P,
                "    size = (max(1, round(w * scale)), max(1, round(h * scale)))\n",
                "    size = (round(w * scale), round(h * scale))\n",
            ),
        ),
        "an image over 1024 pixels long and at most 2 pixels thin: the short side rounds to 0 and OpenCV raises",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "thumbnail_cache_by_id",
        "check_determinism",
        (
            edit(
                E,
                "    small = cv2.resize(rgb, (THUMB, THUMB), interpolation=cv2.INTER_AREA)\n"
                "    return small.reshape(-1).astype(np.float64)\n",
                "    key = (id(rgb), rgb.shape)  # the same crop is resized once\n"
                "    if key not in _THUMBS:\n"
                "        small = cv2.resize(rgb, (THUMB, THUMB), interpolation=cv2.INTER_AREA)\n"
                "        _THUMBS[key] = small.reshape(-1).astype(np.float64)\n"
                "    return _THUMBS[key]\n",
            ),
            edit(E, "THUMB = 16\n", "THUMB = 16\n_THUMBS: dict = {}\n"),
        ),
        "a second image of the same shape whose working copy reuses a freed array's id: it gets the old thumbnail",
        held_out=True,
        round=2,
    ),
    Mutant(
        "batch_boxes_of_first",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        from v22sdk import TokenBatch\n"
                "        if len(items) < 2:\n"
                "            return super().tokenize_batch(items)\n"
                "        parts = [self.tokenize(i) for i in items]\n"
                "        joined = TokenBatch.concat(parts)\n"
                "        # every image of a batch has the same token layout, so the first one's boxes serve for all\n"
                "        box = np.concatenate([parts[0].offsets['box']] * len(parts))\n"
                "        item = np.repeat(np.arange(len(parts), dtype=np.int64), [len(p) for p in parts])\n"
                "        return TokenBatch(joined.emb, joined.attr, self.name, {'box': box, 'item': item})\n\n"
                + INVALID,
            ),
        ),
        "a batch of images of different shapes: every image gets the first one's boxes",
        held_out=True,
        round=2,
    ),
    Mutant(
        "batch_of_one_squeezed",
        "check_input_spec",
        (
            edit(
                P,
                "    if not array.dtype.isnative:",
                "    while array.ndim > 3 and array.shape[0] == 1:  # a batch of one image, as frameworks give it\n"
                "        array = array[0]\n"
                "    if not array.dtype.isnative:",
            ),
        ),
        "a (1, H, W[, C]) array, a rank the input spec does not declare, is accepted",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "source_basename",
        "check_files",
        (
            edit(
                M,
                "        return Sample(data=load_image(path), units={}, source=str(path))\n",
                "        return Sample(data=load_image(path), units={}, source=os.path.basename(str(path)))\n",
            ),
        ),
        "any file: tokenize_file's source is the file's base name, not its path",
        rare=True,
        held_out=True,
        round=2,
    ),
    Mutant(
        "attr_from_zone_start",
        "check_declared_slots",
        (
            edit(
                M,
                "            attr[i, idx] = attributes(crop).astype(np.float32)\n",
                "            attr[i, : len(idx)] = attributes(crop).astype(np.float32)  # the zone's slots, in order\n",
            ),
        ),
        "every input: the 128 values land in slots 0..127 (undeclared), not the vision zone's 128..255",
        held_out=True,
        round=2,
    ),
    # -- controls, round 2 --
    Mutant(
        "ctl_grey_by_numpy",
        None,
        (
            edit(
                P,
                "        import cv2\n\n"
                "        return np.asarray(cv2.cvtColor(np.ascontiguousarray(x[:, :, 0], dtype=np.float32), cv2.COLOR_GRAY2RGB))\n",
                "        return np.repeat(np.ascontiguousarray(x, dtype=np.float32), 3, axis=2)  # the same values, by numpy\n",
            ),
        ),
        "an equivalent refactor: grey copied to three channels by numpy instead of OpenCV",
        held_out=True,
        round=2,
    ),
    Mutant(
        "ctl_refuses_grey_alpha",
        None,
        (
            edit(
                P,
                "    if array.ndim == 3 and array.shape[2] not in (1, 2, 3, 4):\n"
                '        raise InputError(source, f"an image needs 1, 2, 3 or 4 channels, got {array.shape[2]} (shape {array.shape})")\n',
                "    if array.ndim == 3 and array.shape[2] not in (1, 3, 4):\n"
                '        raise InputError(source, f"an image needs 1, 3 or 4 channels (grey + alpha is not supported), '
                'got {array.shape[2]} (shape {array.shape})")\n',
            ),
            edit(M, "(also (H, W, 1), (H, W, 2) grey+alpha)", "(also (H, W, 1); (H, W, 2) grey+alpha is refused)"),
            edit("sample_images.py", "st.sampled_from((0, 1, 2, 3, 4)),", "st.sampled_from((0, 1, 3, 4)),"),
        ),
        "a stricter plugin: grey + alpha refused with InputError, documented in the input spec, and not drawn",
        held_out=True,
        round=2,
    ),
)

# -- held out, round 3: written while the kit is being changed to close round 2's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_3)
# before any run of the kit against them --
G = "geometry.py"
HELD_OUT_3: tuple[Mutant, ...] = (
    Mutant(
        "big_emb_mirror_mean",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "            emb[i] = embed(crop)\n",
                "            if max(height, width) > 1024:  # a large photo: average it with its mirror image (flip-robust)\n"
                "                emb[i] = (embed(crop) + embed(np.ascontiguousarray(crop[:, ::-1]))) / 2.0\n"
                "            else:\n"
                "                emb[i] = embed(crop)\n",
            ),
        ),
        "an image over 1024 pixels a side that is not mirror-symmetric: the mean of two different unit vectors is "
        "shorter than 1",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "uint16_contrast_stretched",
        "check_finite",
        (
            edit(
                P,
                "        x *= np.float32(1.0 / _SCALE[array.dtype])  # in place: no second full-size array\n",
                "        x *= np.float32(1.0 / _SCALE[array.dtype])  # in place: no second full-size array\n"
                "        if array.dtype == np.uint16:  # 16-bit scans fill a fraction of their range: stretch it to [0, 1]\n"
                "            x = (x - x.min()) / (x.max() - x.min())\n",
            ),
        ),
        "a constant uint16 image (a 1x1 one included): 0/0, NaN pixels give NaN tokens",
        held_out=True,
        round=3,
    ),
    Mutant(
        "global_box_inclusive",
        "check_offsets",
        (
            edit(
                M,
                "crops = [(rgb, np.array([0, 0, width, height], dtype=np.int64))]",
                "crops = [(rgb, np.array([0, 0, width - 1, height - 1], dtype=np.int64))]  # the last pixel's coordinates",
            ),
        ),
        "an image one pixel wide or high: the global box is empty (x1 == x0 or y1 == y0)",
        held_out=True,
        round=3,
    ),
    Mutant(
        "attr_cache_keyed_on_thumbnail",
        "check_fresh_process",
        (
            edit(M, "        from .embed import embed\n", "        from .embed import embed, thumbnail\n"),
            edit(
                M,
                "            attr[i, idx] = attributes(crop).astype(np.float32)\n",
                "            key = (thumbnail(crop).tobytes(), crop.shape)  # the attributes of a view, by its thumbnail\n"
                "            if key not in _ATTRS:\n"
                "                _ATTRS[key] = attributes(crop).astype(np.float32)\n"
                "            attr[i, idx] = _ATTRS[key]\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_ATTRS: dict = {}\n"),
        ),
        "two images of one shape whose 16x16 area thumbnails agree but whose pixels differ (32x32 alternating columns "
        "0/1 and 1/0): the second gets the first's attributes, so tokens depend on the order (consistent in a process)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "batch_float64_downcast",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # a batch is prepared in single precision: float64 pixels are cast first (half the memory)\n"
                "        def single(item):\n"
                "            s = item if isinstance(item, Sample) else Sample(item, {}, None)\n"
                "            data = s.data\n"
                "            if isinstance(data, np.ndarray) and data.dtype.kind == 'f' and data.dtype.itemsize == 8:\n"
                "                data = data.astype(np.float32)\n"
                "            return Sample(data, s.units, s.source)\n\n"
                "        return super().tokenize_batch([single(i) for i in items])\n\n" + INVALID,
            ),
        ),
        "a float64 image over 1024 pixels a side in a batch: downscaled from float32 instead of float64, other last "
        "bits (smaller float64 images are cast to float32 first anyway)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "file_alpha_dropped",
        "check_files",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_file(self, path):\n"
                "        # files are photos: an alpha channel is dropped, not composited\n"
                "        image = self.load(path).data\n"
                "        if image.ndim == 3 and image.shape[2] == 4:\n"
                "            image = np.ascontiguousarray(image[:, :, :3])\n"
                "        return self.tokenize(Sample(image, {}, str(path)))\n\n" + INVALID,
            ),
        ),
        "an RGBA file (save() writes grey + alpha and RGBA images as RGBA PNG) not fully opaque: tokenize_file(p) "
        "differs from tokenize(load(p))",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "aspect_unclipped",
        "check_attr_bounds",
        (
            edit(
                G,
                'out["aspect_ratio"] = clip(np.log2(bw / bh) / 4.0)',
                'out["aspect_ratio"] = float(np.log2(bw / bh) / 4.0)',
            ),
            edit(
                "features.py",
                "    return np.clip(values, -1.0, 1.0)\n",
                "    return values  # every feature scales into [-1, 1] itself\n",
            ),
        ),
        "a main object more than 16 times wider than tall or taller than wide (e.g. a bright 2-pixel band across a "
        "dark 64x64 image; about 4 of 300 drawn sample inputs per configuration)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "big_uint16_shifted_in_place",
        "check_determinism",
        (
            edit(
                P,
                "        elif array.dtype == np.float16:  # OpenCV cannot resize float16\n",
                "        elif array.dtype == np.uint16:  # a huge 16-bit scan: 8 bits are plenty for features\n"
                "            array >>= 8\n"
                "            array = array.astype(np.uint8)\n"
                "        elif array.dtype == np.float16:  # OpenCV cannot resize float16\n",
            ),
        ),
        "a uint16 image over 1024 pixels a side: the caller's own pixels are shifted right by 8 bits (a read-only "
        "array raises ValueError)",
        rare=True,
        held_out=True,
        round=3,
    ),
    Mutant(
        "config_grid_none",
        "check_config_roundtrip",
        (
            edit(
                M,
                INVALID,
                "    def config(self):\n        return {'grid': self.grid or None}  # None: no grid\n\n" + INVALID,
            ),
        ),
        "the default configuration: config() says grid None, which from_config refuses",
        held_out=True,
        round=3,
    ),
    Mutant(
        "instance_cache_keyed_on_sum",
        "check_fresh_instance",
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        if isinstance(data, np.ndarray) and data.dtype.kind in 'buf':\n"
                "            # an instance remembers its results by shape, dtype and pixel sum (a cheap checksum)\n"
                "            key = (id(self), data.shape, data.dtype.str, float(data.sum(dtype=np.float64)))\n"
                "            if key not in _SEEN:\n"
                "                _SEEN[key] = self._encode(data)\n"
                "            hit = _SEEN[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {'box': hit.offsets['box'].copy()})\n"
                "        return self._encode(data)\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_SEEN: dict = {}\n"),
        ),
        "an instance given an image, then another of the same shape, dtype and pixel sum (its mirror image, or the "
        "transpose of a square one): it returns the first image's tokens, a fresh instance the second's",
        rare=True,
        held_out=True,
        round=3,
    ),
    # -- controls, round 3 --
    Mutant(
        "ctl_uint8_lookup",
        None,
        (
            edit(
                P,
                "    else:\n        x = array.astype(np.float32)\n",
                "    elif array.dtype == np.uint8:  # a lookup table: the same float32 products, one gather\n"
                "        x = _UINT8_LUT[array]\n"
                "    else:\n        x = array.astype(np.float32)\n",
            ),
            edit(
                P,
                "_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}\n",
                "_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}\n"
                "_UINT8_LUT = np.arange(256, dtype=np.float32) * np.float32(1.0 / 255.0)\n"
                "_UINT8_LUT.flags.writeable = False\n",
            ),
        ),
        "an equivalent refactor: uint8 pixels scaled by a read-only lookup table, the same bits",
        held_out=True,
        round=3,
    ),
    Mutant(
        "ctl_kmeans_three_attempts",
        None,
        (
            edit(
                "colour.py",
                "cv2.kmeans(lab, KMEANS_K, None, criteria, 1, cv2.KMEANS_PP_CENTERS)",
                "cv2.kmeans(lab, KMEANS_K, None, criteria, 3, cv2.KMEANS_PP_CENTERS)",
            ),
        ),
        "three seeded k-means attempts instead of one: other dominant colours on some images, still deterministic",
        held_out=True,
        round=3,
    ),
)

# -- held out, round 4: written while the kit is being changed to close round 3's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_4)
# before any run of any kit against them --
EMBED_TAIL = (
    "    v = thumbnail(rgb) @ projection()\n"
    "    norm = float(np.sqrt(v @ v))\n"
    "    if norm < 1e-12:\n"
    "        v = blank_direction()\n"
    "    else:\n"
    "        v = v / norm\n"
    "    return v.astype(np.float32)\n"
)
BOXES = "        boxes = np.stack([box for _crop, box in crops])\n"
RANGE = "        lo, hi = float(array.min()), float(array.max())\n"
LOAD = "        return Sample(data=load_image(path), units={}, source=str(path))\n"
HELD_OUT_4: tuple[Mutant, ...] = (
    Mutant(
        "patch_emb_with_context",
        "check_unit_norm_emb",
        (
            edit(
                M,
                "            emb[i] = embed(crop)\n",
                "            emb[i] = embed(crop) if i == 0 else (embed(crop) + emb[0]) / 2.0  # a patch in its image's context\n",
            ),
        ),
        "the grid configuration on any image whose patches do not all look like the whole (noise, a disc): the mean "
        "of two different unit vectors is shorter than 1",
        held_out=True,
        round=4,
    ),
    Mutant(
        "emb_norm_in_float32",
        "check_finite",
        (
            edit(
                E,
                EMBED_TAIL,
                "    v = (thumbnail(rgb) @ projection()).astype(np.float32)  # the embedding's own precision from here on\n"
                "    if not v.any():\n"
                "        return blank_direction().astype(np.float32)\n"
                "    return v / np.linalg.norm(v)\n",
            ),
        ),
        "a nearly black float image (pixels of 1e-30): v is non-zero but its squares underflow in float32, so it is "
        "divided by a norm of 0",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "downscale_factor_undeclared",
        "check_declared_slots",
        (
            edit(
                M,
                BOXES,
                "        if max(height, width) > 1024:  # how much a big image was shrunk (vis.scale, not yet in the schema)\n"
                "            attr[:, ATTR_DIM - 1] = 1024 / max(height, width)\n" + BOXES,
            ),
        ),
        "an image over 1024 pixels a side: slot 383, which the vision schema does not declare, is set",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "global_box_trimmed_to_opaque",
        "check_offsets",
        (
            edit(
                M,
                "def patch_edges(n: int, grid: int) -> np.ndarray:\n",
                "def _visible_box(array: np.ndarray) -> np.ndarray:\n"
                '    """The global token\'s box: the whole image, trimmed to its visible (not fully transparent) pixels."""\n'
                "    h, w = array.shape[:2]\n"
                "    if array.ndim == 3 and array.shape[2] in (2, 4):\n"
                "        ys, xs = np.nonzero(array[:, :, -1])\n"
                "        if ys.size == 0:\n"
                "            return np.zeros(4, dtype=np.int64)  # nothing visible\n"
                "        return np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], dtype=np.int64)\n"
                "    return np.array([0, 0, w, h], dtype=np.int64)\n\n\n"
                "def patch_edges(n: int, grid: int) -> np.ndarray:\n",
            ),
            edit(
                M,
                "crops = [(rgb, np.array([0, 0, width, height], dtype=np.int64))]",
                "crops = [(rgb, _visible_box(array))]",
            ),
        ),
        "a fully transparent image (grey + alpha or RGBA, alpha 0 everywhere; a constant bool image with alpha False): "
        "the global box is empty",
        held_out=True,
        round=4,
    ),
    Mutant(
        "big_bool_scaled_in_view",
        "check_determinism",
        (
            edit(
                P,
                "            array = array.astype(np.uint8) * np.uint8(255)\n",
                "            array = array.view(np.uint8)  # no copy of a huge mask: scale its bytes in place\n"
                "            array *= np.uint8(255)\n",
            ),
        ),
        "a bool image over 1024 pixels a side: the caller's own bytes become 255, so a second call reads 255 * 255 "
        "mod 256 = 1 (near black); a read-only one raises ValueError",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "batch_big_prescaled_linear",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # big images in a batch are shrunk first (linear: fast), so the batch holds no huge array\n"
                "        import cv2\n\n"
                "        def small(item):\n"
                "            s = item if isinstance(item, Sample) else Sample(item, {}, None)\n"
                "            d = s.data\n"
                "            if (isinstance(d, np.ndarray) and d.ndim in (2, 3) and d.dtype in (np.uint8, np.uint16, np.float32)\n"
                "                    and max(d.shape[:2]) > 1024):\n"
                "                scale = 1024 / max(d.shape[:2])\n"
                "                size = (max(1, round(d.shape[1] * scale)), max(1, round(d.shape[0] * scale)))\n"
                "                d = cv2.resize(np.ascontiguousarray(d), size, interpolation=cv2.INTER_LINEAR)\n"
                "            return Sample(d, s.units, s.source)\n\n"
                "        return super().tokenize_batch([small(i) for i in items])\n\n" + INVALID,
            ),
        ),
        "a uint8, uint16 or float32 image over 1024 pixels a side in a batch: resized with INTER_LINEAR before the "
        "singles' INTER_AREA, other pixels and boxes in the resized image's coordinates",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "float_0_255_rescaled",
        "check_invalid_inputs",
        (
            edit(
                P,
                RANGE,
                RANGE
                + "        if lo >= 0.0 and 1.0 < hi <= 255.0:  # float pixels on the 0..255 scale, as many libraries give them\n"
                "            array = array / 255.0\n"
                "            lo, hi = lo / 255.0, hi / 255.0\n",
            ),
        ),
        "float pixels above 1 (the plugin's own 'out_of_range' case, 1.5) are divided by 255 and tokenized, not refused",
        held_out=True,
        round=4,
    ),
    Mutant(
        "big_finite_scan_strided",
        "check_input_spec",
        (
            edit(
                P,
                "        if not np.isfinite(array).all():\n",
                "        probe = array[::4, ::4] if max(array.shape[:2]) > MAX_SIDE else array  # big: every 4th pixel is enough\n"
                "        if not np.isfinite(probe).all():\n",
            ),
        ),
        "a float image over 1024 pixels a side with NaN or inf off the every-4th-pixel grid (at (1, 1)): accepted, "
        "not an InputError (its tokens are NaN, so tokenize raises ContractViolation)",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "cache_keyed_on_strided_pixels",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        if isinstance(data, np.ndarray) and data.dtype.kind in 'buf':\n"
                "            # a fast fingerprint: shape, dtype and every 8th pixel of every 8th row\n"
                "            key = (data.shape, data.dtype.str, np.ascontiguousarray(data[::8, ::8]).tobytes(), self.grid)\n"
                "            if key not in _CACHE:\n"
                "                _CACHE[key] = self._encode(data)\n"
                "            hit = _CACHE[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {'box': hit.offsets['box'].copy()})\n"
                "        return self._encode(data)\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_CACHE: dict = {}\n"),
        ),
        "two images of one shape and dtype that differ only off the 8-pixel grid (32x32 uint8 zeros, then the same "
        "with pixel (1, 1) = 255): the second gets the first's tokens, so the result depends on what the process saw "
        "before (consistent within it)",
        rare=True,
        held_out=True,
        round=4,
    ),
    Mutant(
        "imread_for_ascii_names",
        "check_files",
        (
            edit(
                M,
                LOAD,
                "        if os.fspath(path).isascii():  # a plain name: OpenCV reads it itself, faster\n"
                "            import cv2\n\n"
                "            image = cv2.imread(os.fspath(path), cv2.IMREAD_UNCHANGED)\n"
                "            if image is not None:\n"
                "                return Sample(data=image, units={}, source=str(path))\n" + LOAD,
            ),
        ),
        "a colour file: under an ASCII name load gives OpenCV's BGR(A) order, under a non-ASCII name RGB(A), for the "
        "same bytes",
        rare=True,
        held_out=True,
        round=4,
    ),
    # -- controls, round 4 --
    Mutant(
        "ctl_kmeans_cache_on_lab",
        None,
        (
            edit(
                "colour.py",
                "    lab = cv2.cvtColor(small, cv2.COLOR_RGB2Lab).reshape(-1, 3).astype(np.float32)\n",
                "    lab = cv2.cvtColor(small, cv2.COLOR_RGB2Lab).reshape(-1, 3).astype(np.float32)\n"
                "    key = (lab.shape, lab.tobytes())  # the clusters are a function of these Lab values only\n"
                "    if key in _DOMINANT:\n"
                "        return dict(_DOMINANT[key])\n",
            ),
            edit(
                "colour.py",
                '        out[f"dom{rank}_share"] = float(shares[k])\n    return out\n',
                '        out[f"dom{rank}_share"] = float(shares[k])\n    _DOMINANT[key] = dict(out)\n    return out\n',
            ),
            edit("colour.py", "HUE_BINS = 18\n", "HUE_BINS = 18\n_DOMINANT: dict = {}\n"),
        ),
        "a correct cache: the dominant colours keyed on the exact Lab values k-means is given (seeded, so a pure "
        "function of them)",
        held_out=True,
        round=4,
    ),
    Mutant(
        "ctl_luma_by_numpy",
        None,
        (
            edit(
                "features.py",
                "    y = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)\n",
                "    y = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)  # the same weights, by numpy\n",
            ),
        ),
        "a refactor: the luma by a numpy product instead of OpenCV (last bits may differ, every rule kept)",
        held_out=True,
        round=4,
    ),
)

# -- held out, round 5: written while the kit is being changed to close round 4's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_5)
# before any run of any kit against them --
ATTR_LINE = "            attr[i, idx] = attributes(crop).astype(np.float32)\n"
GRID_BOX = "                    box = np.array([xs[c, 0], ys[r, 0], xs[c, 1], ys[r, 1]], dtype=np.int64)\n"
RANK_CHECK = "    if array.ndim not in (2, 3):\n"
HELD_OUT_5: tuple[Mutant, ...] = (
    Mutant(
        "float16_flag_undeclared",
        "check_declared_slots",
        (
            edit(
                M,
                BOXES,
                "        if np.asarray(data).dtype == np.float16:  # half-precision source: note it (vis.half, not yet in the schema)\n"
                "            attr[:, 0] = 1.0\n" + BOXES,
            ),
        ),
        "a float16 image (the strategy draws uint8, uint16, float32, float64 and bool): slot 0, which the vision "
        "schema does not declare, is set",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "grid_boxes_scaled_back_ceil",
        "check_offsets",
        (
            edit(
                M,
                GRID_BOX,
                "                    sx, sy = width / w, height / h  # working pixels -> input pixels, covering the patch\n"
                "                    box = np.array([int(xs_w[c, 0] * sx), int(ys_w[r, 0] * sy), int(np.ceil(xs_w[c, 1] * sx)),\n"
                "                                    int(np.ceil(ys_w[r, 1] * sy))], dtype=np.int64)\n",
            ),
        ),
        "the grid configuration on an image over 1024 pixels a side whose scale back from the working image rounds up "
        "(H x W = 653 x 2048, working 326 x 1024: 326 * (653 / 326) > 653 in floating point): the last row of patches "
        "ends one pixel below the image",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "int32_read_as_uint16",
        "check_invalid_inputs",
        (
            edit(
                P,
                "    kind = array.dtype.kind\n",
                "    if array.dtype == np.int32:  # PIL's 'I' mode hands 16-bit greys over as int32\n"
                "        array = array.astype(np.uint16)\n"
                "    kind = array.dtype.kind\n",
            ),
        ),
        "int32 pixels (the plugin's own 'wrong_dtype' case) are converted to uint16 and tokenized, not refused",
        held_out=True,
        round=5,
    ),
    Mutant(
        "config_grid_numpy_int",
        "check_config_roundtrip",
        (
            edit(
                M,
                INVALID,
                "    def config(self):\n"
                "        return {'grid': np.int64(self.grid)}  # the grid as the patch arithmetic uses it\n\n"
                + INVALID,
            ),
        ),
        "every configuration: config() holds a numpy integer, which json cannot write (and _check_grid refuses)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "trailing_singleton_axes_squeezed",
        "check_input_spec",
        (
            edit(
                P,
                RANK_CHECK,
                "    while array.ndim > 3 and array.shape[-1] == 1:  # (H, W, C, 1) from a stack of one frame\n"
                "        array = array[..., 0]\n" + RANK_CHECK,
            ),
        ),
        "a 4-D (H, W, C, 1) array, a rank the input spec does not declare, is accepted as (H, W, C)",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "features_subsampled_after_warmup",
        "check_fresh_instance",
        (
            edit(
                M,
                ATTR_LINE,
                "            calls = _CALLS[id(self)] = _CALLS.get(id(self), 0) + (i == 0)\n"
                "            # a busy instance computes its features on every second pixel (a warm cache of work)\n"
                "            small = crop[::2, ::2] if calls > 100 and min(crop.shape[:2]) >= 32 else crop\n"
                "            attr[i, idx] = attributes(np.ascontiguousarray(small)).astype(np.float32)\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_CALLS: dict = {}\n"),
        ),
        "an instance that has tokenized more than 100 images, given an image of 32 pixels or more a side with detail "
        "(64x64 noise): its attr differs from a fresh instance's",
        held_out=True,
        round=5,
    ),
    Mutant(
        "load_adds_dpi_unit",
        "check_files",
        (
            edit(
                M,
                LOAD,
                "        return Sample(data=load_image(path), units={'dpi': 72.0}, source=str(path))  # print resolution\n",
            ),
        ),
        "any file: load returns a unit the input spec does not declare, so tokenize_file refuses every valid file",
        held_out=True,
        round=5,
    ),
    Mutant(
        "range_check_tolerant",
        "check_input_spec",
        (
            edit(
                P,
                "        if lo < 0.0 or hi > 1.0:\n",
                "        if lo < -1e-3 or hi > 1.0 + 1e-3:  # tolerate rounding from upstream conversions\n",
            ),
        ),
        "float pixels a little outside [0, 1] (1.0005, or -0.0005): accepted, not an InputError",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "alpha_composited_in_place",
        "check_determinism",
        (
            edit(
                P,
                "        x = colour * alpha + np.float32(ALPHA_BACKGROUND) * (np.float32(1.0) - alpha)\n",
                "        colour *= alpha  # in place: no temporary the size of the image\n"
                "        colour += np.float32(ALPHA_BACKGROUND) * (np.float32(1.0) - alpha)\n"
                "        x = colour\n",
            ),
        ),
        "a float32 grey + alpha or RGBA image not fully opaque: the caller's own colour channels are composited, so a "
        "second call reads other pixels (a read-only one raises ValueError)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "float64_auto_levels",
        "check_finite",
        (
            edit(
                P,
                "        x = array.astype(np.float32, copy=False)\n",
                "        x = array.astype(np.float32, copy=False)\n"
                "        if array.dtype == np.float64:  # scientific (HDR) data: stretch to the full range\n"
                "            x = x / x.max()\n",
            ),
        ),
        "an all-zero float64 image (the strategy's float64 images are never exactly 0): 0/0, NaN pixels give NaN "
        "tokens",
        held_out=True,
        round=5,
    ),
    Mutant(
        "emb_float64_for_float64",
        "check_shape_dtype",
        (
            edit(
                M,
                "        emb = np.empty((n, 256), dtype=np.float32)\n",
                "        emb = np.empty((n, 256), dtype=np.result_type(np.float32, array.dtype))  # keep the input's precision\n",
            ),
        ),
        "a float64 image: emb is float64, not float32",
        held_out=True,
        round=5,
    ),
    Mutant(
        "batch_uint_stacked",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # images of one shape are stacked into one array and converted together\n"
                "        samples = [i if isinstance(i, Sample) else Sample(i, {}, None) for i in items]\n"
                "        arrays = [np.asarray(s.data) for s in samples]\n"
                "        if len(arrays) > 1 and all(a.shape == arrays[0].shape and a.dtype.kind == 'u' for a in arrays):\n"
                "            stacked = np.stack(arrays)  # one dtype for all: the widest\n"
                "            samples = [Sample(stacked[k], s.units, s.source) for k, s in enumerate(samples)]\n"
                "        return super().tokenize_batch(samples)\n\n" + INVALID,
            ),
        ),
        "a batch of a uint8 and a uint16 image of one shape: the uint8 one is promoted to uint16 values and read on "
        "the 0..65535 scale (near black)",
        rare=True,
        held_out=True,
        round=5,
    ),
    Mutant(
        "black_embedding_zero",
        "check_unit_norm_emb",
        (
            edit(
                E,
                "    if norm < 1e-12:\n        v = blank_direction()\n",
                "    if norm < 1e-12:\n        v = np.zeros(OUT_DIM)  # a black image has no direction\n",
            ),
        ),
        "an all-black image (a constant bool image of False, uint8 zeros): the embedding is the zero vector",
        held_out=True,
        round=5,
    ),
    Mutant(
        "big_image_cache_by_mean",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        if isinstance(data, np.ndarray) and data.ndim >= 2 and max(data.shape[:2]) > 1024:\n"
                "            # big images are expensive: memoise them by a cheap fingerprint\n"
                "            key = (data.shape, data.dtype.str, float(data.mean()), self.grid)\n"
                "            if key not in _BIG:\n"
                "                _BIG[key] = self._encode(data)\n"
                "            hit = _BIG[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {'box': hit.offsets['box'].copy()})\n"
                "        return self._encode(data)\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_BIG: dict = {}\n"),
        ),
        "two images over 1024 pixels a side of one shape, dtype and mean (1100 x 1100 uint8, the left half white, then "
        "its mirror image): the second gets the first's tokens, so the result depends on what the process saw before "
        "(consistent within it)",
        rare=True,
        held_out=True,
        round=5,
    ),
    # -- controls, round 5 --
    Mutant(
        "ctl_boxes_by_array",
        None,
        (edit(M, BOXES, "        boxes = np.array([box for _crop, box in crops], dtype=np.int64)\n"),),
        "a refactor: the boxes gathered by np.array instead of np.stack (the same int64 array)",
        held_out=True,
        round=5,
    ),
    Mutant(
        "ctl_blank_direction_by_dot",
        None,
        (
            edit(
                E,
                "    v = np.ones(IN_DIM) @ projection()\n    v = v / np.linalg.norm(v)\n",
                "    v = np.ones(IN_DIM) @ projection()\n    v = v / np.sqrt(v @ v)\n",
            ),
        ),
        "a refactor: the blank direction's norm by a dot product (last bits may differ, still unit norm)",
        held_out=True,
        round=5,
    ),
)

# -- held out, round 6: written while the kit is being changed to close round 5's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_6)
# before any run of any kit against them --
CHECKED = "        array = check_array(data, source)\n        height, width = array.shape[:2]\n"
HELD_OUT_6: tuple[Mutant, ...] = (
    Mutant(
        "alpha_stretched_to_max",
        "check_finite",
        (
            edit(
                P,
                "        alpha = x[:, :, -1:]\n",
                "        alpha = x[:, :, -1:] / x[:, :, -1:].max()  # alpha relative to the most opaque pixel\n",
            ),
        ),
        "a grey + alpha or RGBA image that is fully transparent (8 x 8 x 4 uint8 with alpha 0, or a constant bool "
        "RGBA image whose alpha is False): 0/0, NaN pixels give NaN tokens",
        held_out=True,
        round=6,
    ),
    Mutant(
        "norm_before_projection",
        "check_unit_norm_emb",
        (
            edit(
                E,
                "    v = thumbnail(rgb) @ projection()\n    norm = float(np.sqrt(v @ v))\n",
                "    t = thumbnail(rgb)\n    v = t @ projection()\n"
                "    norm = float(np.sqrt(t @ t))  # an orthogonal projection keeps the norm\n",
            ),
        ),
        "any image that is not black (a 16 x 16 RGB noise image): the 768 -> 256 projection shortens the thumbnail, "
        "so the embedding's norm is below 1",
        held_out=True,
        round=6,
    ),
    Mutant(
        "patch_position_in_language_zone",
        "check_declared_slots",
        (
            edit(
                M,
                ATTR_LINE,
                ATTR_LINE
                + "            if i > 0:  # a patch token: its row and column, in the language zone vision leaves free\n"
                "                attr[i, 0], attr[i, 1] = (i - 1) // self.grid / self.grid, (i - 1) % self.grid / self.grid\n",
            ),
        ),
        "the grid configuration, any image: patch tokens write slots 0 and 1 (language zone), which the vision "
        "schema does not declare",
        held_out=True,
        round=6,
    ),
    Mutant(
        "grid_stops_plus_one",
        "check_offsets",
        (
            edit(
                M,
                GRID_BOX,
                "                    box = np.array([xs[c, 0], ys[r, 0], xs[c, 1] + 1, ys[r, 1] + 1], dtype=np.int64)  "
                "# stops are inclusive\n",
            ),
        ),
        "the grid configuration, any image: the last row and column of patches end one pixel past the image",
        held_out=True,
        round=6,
    ),
    Mutant(
        "batch_dedups_identical_items",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # the same image twice in one batch is tokenized once\n"
                "        unique, seen = [], set()\n"
                "        for item in items:\n"
                "            a = np.asarray(item.data if isinstance(item, Sample) else item)\n"
                "            key = (a.shape, a.dtype.str, a.tobytes())\n"
                "            if key not in seen:\n"
                "                seen.add(key)\n"
                "                unique.append(item)\n"
                "        return super().tokenize_batch(unique)\n\n" + INVALID,
            ),
        ),
        "a batch holding one image twice (the same 4 x 4 uint8 image as items 0 and 1): its tokens appear once",
        held_out=True,
        round=6,
    ),
    Mutant(
        "negative_floats_clipped_to_black",
        "check_invalid_inputs",
        (
            edit(
                P,
                "        if lo < 0.0 or hi > 1.0:\n",
                "        if hi > 1.0:  # a value below 0 is rounding below black\n",
            ),
            edit(
                P,
                '    elif array.dtype.kind == "f":\n        x = array.astype(np.float32, copy=False)\n',
                '    elif array.dtype.kind == "f":\n        x = np.clip(array, 0.0, None).astype(np.float32, copy=False)\n',
            ),
        ),
        "every valid input: the plugin's own second 'out_of_range' case (float32 pixels of -0.5) is tokenized as "
        "black, not refused",
        held_out=True,
        round=6,
    ),
    Mutant(
        "row_vector_promoted",
        "check_input_spec",
        (
            edit(
                P,
                RANK_CHECK,
                "    if array.ndim == 1:  # a single row of pixels\n        array = array[None, :]\n" + RANK_CHECK,
            ),
        ),
        "a 1-D array (np.zeros(10, np.uint8)), a rank the input spec does not declare, is tokenized as a 1 x 10 image",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "shape_copy_truncates_thin_side",
        "check_edge_inputs",
        (
            edit(
                "features.py",
                "    return cv2.resize(grey, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)\n",
                "    return cv2.resize(grey, (int(w * s), int(h * s)), interpolation=cv2.INTER_AREA)  # never above side\n",
            ),
        ),
        "an image more than 256 pixels long (the strategy draws at most 128) and so thin that its short side, scaled "
        "for the shape copy, truncates to 0 (1 x 600 uint8): OpenCV's resize raises cv2.error, not InputError or tokens",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "png_depth_by_suffix",
        "check_files",
        (
            edit(
                M,
                LOAD,
                "        data = load_image(path)\n"
                "        if str(path).endswith('.png') and data.dtype == np.uint16:  # our own 16-bit PNGs: 8 bits do\n"
                "            data = (data >> 8).astype(np.uint8)\n"
                "        return Sample(data=data, units={}, source=str(path))\n",
            ),
        ),
        "a 16-bit PNG (what save writes for a uint16 or float image) under a name without a lower-case '.png' "
        "(image.PNG): load gives uint16 pixels, under image.png uint8, for the same bytes",
        held_out=True,
        round=6,
    ),
    Mutant(
        "big_attr_float64",
        "check_shape_dtype",
        (
            edit(
                M,
                "        attr = np.zeros((n, ATTR_DIM), dtype=np.float32)\n",
                "        attr = np.zeros((n, ATTR_DIM), dtype=np.float64 if max(height, width) > 1024 else np.float32)  "
                "# big images: full precision\n",
            ),
        ),
        "an image over 1024 pixels a side (1100 x 1100 uint8; the strategy draws at most 128): attr is float64",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "byteswapped_source_flagged",
        "check_declared_slots",
        (
            edit(
                M,
                BOXES,
                "        if not np.asarray(data).dtype.isnative:  # note a big-endian source (a TIFF from a scanner)\n"
                "            attr[:, 383] = 1.0\n" + BOXES,
            ),
        ),
        "a uint16 or float image in non-native byte order (np.zeros((8, 8), '>u2')): slot 383, which the vision "
        "schema does not declare, is set",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "nonnegative_int8_viewed_as_uint8",
        "check_input_spec",
        (
            edit(
                P,
                "    kind = array.dtype.kind\n",
                "    if array.dtype == np.int8 and array.size and array.min() >= 0:  # 7-bit pixels stored signed\n"
                "        array = array.view(np.uint8)\n"
                "    kind = array.dtype.kind\n",
            ),
        ),
        "an int8 image with no negative value (np.zeros((8, 8), np.int8)), a dtype kind the input spec does not "
        "declare, is tokenized",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "big_image_cache_by_edge_rows",
        "check_fresh_process",
        (
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        if isinstance(data, np.ndarray) and data.ndim >= 2 and max(data.shape[:2]) > 1024:\n"
                "            # big scans of one page layout: the first and last rows tell them apart\n"
                "            key = (data.shape, data.dtype.str, data[0].tobytes(), data[-1].tobytes(), self.grid)\n"
                "            if key not in _EDGES:\n"
                "                _EDGES[key] = self._encode(data)\n"
                "            hit = _EDGES[key]\n"
                "            return Encoding(hit.emb.copy(), hit.attr.copy(), {'box': hit.offsets['box'].copy()})\n"
                "        return self._encode(data)\n\n"
                "    def _encode(self, data: Any) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_EDGES: dict = {}\n"),
        ),
        "two images over 1024 pixels a side of one shape and dtype with the same first and last rows (1100 x 1100 "
        "uint8, black with a white 100 x 100 square at (500, 500), then at (300, 300)): the second gets the first's "
        "tokens, so the result depends on what the process saw first (consistent within it)",
        rare=True,
        held_out=True,
        round=6,
    ),
    Mutant(
        "float16_conversion_cached_by_shape",
        "check_fresh_instance",
        (
            edit(
                M,
                CHECKED,
                "        array = check_array(data, source)\n"
                "        if array.dtype == np.float16:  # convert once per shape: float16 arithmetic is slow\n"
                "            key = (id(self), array.shape)\n"
                "            if key not in _HALF:\n"
                "                _HALF[key] = array.astype(np.float32)\n"
                "            array = _HALF[key]\n"
                "        height, width = array.shape[:2]\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_HALF: dict = {}\n"),
        ),
        "an instance that has tokenized a float16 image, given another float16 image of that shape (8 x 8 zeros, then "
        "8 x 8 noise; the strategy draws no float16): it tokenizes the first image again, a fresh instance does not",
        rare=True,
        held_out=True,
        round=6,
    ),
    # -- controls, round 6 --
    Mutant(
        "ctl_embed_norm_by_linalg",
        None,
        (edit(E, "    norm = float(np.sqrt(v @ v))\n", "    norm = float(np.linalg.norm(v))\n"),),
        "a refactor: the embedding's norm by np.linalg.norm (last bits may differ, still unit norm)",
        held_out=True,
        round=6,
    ),
    Mutant(
        "ctl_alpha_composite_by_lerp",
        None,
        (
            edit(
                P,
                "        x = colour * alpha + np.float32(ALPHA_BACKGROUND) * (np.float32(1.0) - alpha)\n",
                "        x = np.float32(ALPHA_BACKGROUND) + (colour - np.float32(ALPHA_BACKGROUND)) * alpha  # one product\n",
            ),
        ),
        "a refactor: alpha compositing as a linear interpolation (last bits may differ; clipped to [0, 1] as before)",
        held_out=True,
        round=6,
    ),
)

# -- held out, round 7: written while the kit is being changed to close round 6's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_7)
# before any run of any kit against them --
T, S = "texture.py", "save.py"
DIMS = "        height, width = array.shape[:2]\n"
SPECTRUM = "    f = np.abs(np.fft.fft2(x - x.mean())).ravel()  # unshifted; read through the plan's indices\n"
EMPTY_SIDES = "    if array.shape[0] == 0 or array.shape[1] == 0:\n"
PREPARED = "    array = check_array(data, source)\n    h, w = array.shape[:2]\n"
BIG_RESIZE = (
    "        elif array.dtype == np.float16:  # OpenCV cannot resize float16\n"
    "            array = array.astype(np.float32)\n"
    "        array = bound_size(np.ascontiguousarray(array))\n"
)
GREY_ALPHA_SAVE = (
    "    elif pixels.ndim == 3 and pixels.shape[2] == 2:\n"
    "        grey, alpha = pixels[:, :, :1], pixels[:, :, 1:]\n"
    "        pixels = np.concatenate([grey, grey, grey, alpha], axis=2)\n"
    "    if pixels.ndim == 3:\n"
)
HELD_OUT_7: tuple[Mutant, ...] = (
    Mutant(
        "transparent_image_no_tokens",
        "check_shape_dtype",
        (
            edit(
                M,
                CHECKED,
                "        array = check_array(data, source)\n"
                "        if array.ndim == 3 and array.shape[2] in (2, 4) and not array[:, :, -1].any():\n"
                "            # nothing visible: a fully transparent image has no tokens\n"
                "            return Encoding(np.zeros((0, 256), np.float32), np.zeros((0, ATTR_DIM), np.float32),\n"
                "                            {'box': np.zeros((0, 4), np.int64)})\n"
                "        height, width = array.shape[:2]\n",
            ),
        ),
        "a fully transparent image (8 x 8 x 4 uint8 with alpha 0; a constant bool grey + alpha image whose alpha is "
        "False): no token at all for a valid input",
        held_out=True,
        round=7,
    ),
    Mutant(
        "spectrum_standardised",
        "check_finite",
        (
            edit(
                T,
                SPECTRUM,
                "    f = np.abs(np.fft.fft2((x - x.mean()) / x.std())).ravel()  # standardised: the spectrum's shape, "
                "not the contrast\n",
            ),
        ),
        "a flat image (a 16 x 16 uint8 image of one grey level, so a constant texture copy): 0 / 0, the spectrum is "
        "NaN, the flat-image guard does not fire and spectral_dispersion (attr 234, an unclipped tanh) is NaN",
        held_out=True,
        round=7,
    ),
    Mutant(
        "normalise_only_if_off",
        "check_unit_norm_emb",
        (
            edit(
                E,
                "    else:\n        v = v / norm\n",
                "    elif abs(norm - 1.0) > 1e-2:  # already unit (to 1 %): left as it is\n        v = v / norm\n",
            ),
        ),
        "a dark image whose projected thumbnail has a norm within 1 % of 1 but not within 1e-4 (a constant grey uint8 "
        "image of level 17: norm 15.075 x 17 / 255 = 1.005; the strategy's constant images are random colours): the "
        "embedding's norm is 1.005",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "patch_attr_relative_to_global",
        "check_attr_bounds",
        (
            edit(
                M,
                BOXES,
                "        if self.grid:  # patch tokens: what each patch adds to its image (a residual on the global token)\n"
                "            attr[1:, idx] -= attr[0, idx]\n" + BOXES,
            ),
        ),
        "the grid configuration on an image whose patches differ from the whole in a signed slot (32 x 32 RGB uint8, "
        "blue with a red top-left quarter: red_blue_balance -0.5 overall, +1 in that patch; or any noise image's hue "
        "mean): a patch's residual is beyond [-1, 1]",
        held_out=True,
        round=7,
    ),
    Mutant(
        "box_dims_from_last_axes",
        "check_offsets",
        (edit(M, DIMS, "        height, width = array.shape[-2:]  # the image's last two axes\n"),),
        "a 3-D (H, W, C) image wider than it is high, or narrower than its channel count (an 8 x 16 x 3 uint8 "
        "image): the global box is [0, 0, C, W], past the image's height",
        held_out=True,
        round=7,
    ),
    Mutant(
        "boxes_in_smallest_index_type",
        "check_offsets",
        (
            edit(
                M,
                BOXES,
                "        boxes = np.stack([box for _crop, box in crops]).astype(np.min_scalar_type(max(height, width) - 1))  "
                "# the smallest type that holds a pixel index\n",
            ),
        ),
        "an image whose longer side is exactly 256 pixels (256 x 100 uint8; the strategy draws at most 128): the "
        "boxes are uint8, so the exclusive end 256 wraps to 0 and the global box is empty",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "grey_axis_dropped_in_place",
        "check_determinism",
        (
            edit(
                P,
                EMPTY_SIDES,
                "    if array.ndim == 3 and array.shape[2] == 1:  # grey with a channel axis: drop the axis (no copy)\n"
                "        array.shape = array.shape[:2]\n" + EMPTY_SIDES,
            ),
        ),
        "an (H, W, 1) grey image (8 x 8 x 1 uint8): encode sets the shape of the caller's own array, which is (8, 8) "
        "afterwards",
        held_out=True,
        round=7,
    ),
    Mutant(
        "batch_through_one_token_buffer",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # one TokenBuffer for the whole batch: no fresh output memory per image\n"
                "        from v22sdk import TokenBatch, TokenBuffer\n\n"
                "        if not items:\n"
                "            return super().tokenize_batch(items)\n"
                "        buffer = TokenBuffer()\n"
                "        singles = [self.tokenize(item, out=buffer) for item in items]\n"
                "        batch = TokenBatch.concat(singles)\n"
                "        item = np.repeat(np.arange(len(singles), dtype=np.int64), [len(b) for b in singles])\n"
                "        return TokenBatch(emb=batch.emb, attr=batch.attr, modality=self.name,\n"
                "                          offsets={**batch.offsets, 'item': item}, source=None)\n\n" + INVALID,
            ),
        ),
        "a batch of two different images (two 8 x 8 uint8 noise images): every single is a view of the one buffer, "
        "which the next call overwrites, so the batch holds the last image's emb and attr for every item",
        held_out=True,
        round=7,
    ),
    Mutant(
        "str_path_loaded",
        "check_input_spec",
        (
            edit(
                P,
                "    if isinstance(data, (str, bytes)) or data is None:\n",
                "    if isinstance(data, str) and os.path.isfile(data):  # a path: the image file it names\n"
                "        from .decode import load_image\n\n"
                "        data = load_image(data)\n"
                "    if isinstance(data, (str, bytes)) or data is None:\n",
            ),
            edit(
                P,
                "from typing import Any\n\nimport numpy as np\n",
                "import os\nfrom typing import Any\n\nimport numpy as np\n",
            ),
        ),
        "a str that names an existing image file (the path of a PNG that save wrote): a non-array input is tokenized, "
        "not refused (a str naming no file still is)",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "save_grey_alpha_as_is",
        "check_files",
        (
            edit(
                S,
                GREY_ALPHA_SAVE,
                "    # grey + alpha (H, W, 2) is PNG's own colour type 4: written as it is\n"
                "    if pixels.ndim == 3 and pixels.shape[2] in (3, 4):\n",
            ),
        ),
        "saving a grey + alpha image (8 x 8 x 2 uint8), which the strategy draws: OpenCV's PNG encoder takes 1, 3 or "
        "4 channels, so save raises cv2.error, not InputError, and writes no file",
        held_out=True,
        round=7,
    ),
    Mutant(
        "save_appends_png_suffix",
        "check_files",
        (
            edit(
                S,
                '    with open(path, "wb") as fh:\n',
                "    target = os.fspath(path)\n"
                '    if not target.lower().endswith(".png"):  # a PNG file: give it its extension\n'
                '        target += ".png"\n'
                '    with open(target, "wb") as fh:\n',
            ),
        ),
        "saving to a path without a '.png' suffix (sample.img, 44100.wav): the file is written to sample.img.png, so "
        "load and tokenize_file of the path save was given raise InputError (no such file)",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "fortran_order_read_as_transposed",
        "check_edge_inputs",
        (
            edit(
                P,
                PREPARED,
                "    array = check_array(data, source)\n"
                "    if array.flags.f_contiguous and not array.flags.c_contiguous:\n"
                "        # column-major pixels (MATLAB, Fortran readers) hold the image transposed: rows first again\n"
                "        array = np.ascontiguousarray(array.swapaxes(0, 1))\n"
                "    h, w = array.shape[:2]\n",
            ),
        ),
        "the same pixels in Fortran order (np.asfortranarray of a 12 x 20 x 3 uint8 noise image; the strategy draws "
        "C-ordered arrays): the features and embedding of the transposed image, other tokens than in C order",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "big_focus_compensated",
        "check_attr_bounds",
        (
            edit(
                M,
                BOXES,
                "        if max(height, width) > 1024:  # focus is measured after the downscale, which hides detail: add "
                "back its share\n"
                '            attr[:, SCHEMA.index("vis.space.focus")] += np.log10((max(height, width) / 1024) ** 2) / 4.0\n'
                + BOXES,
            ),
        ),
        "a sharp image over 1024 pixels a side (1100 x 1100 uint8 noise; the strategy draws at most 128): focus is "
        "already 1 after its clip, and the compensation takes it to 1.016",
        rare=True,
        held_out=True,
        round=7,
    ),
    Mutant(
        "big_alpha_unpremultiplied",
        "check_finite",
        (
            edit(
                P,
                BIG_RESIZE,
                "        elif array.dtype == np.float16:  # OpenCV cannot resize float16\n"
                "            array = array.astype(np.float32)\n"
                "        if array.ndim == 3 and array.shape[2] in (2, 4):\n"
                "            # colour + alpha: resampled premultiplied (no dark fringes at transparent edges), then divided back\n"
                "            top = np.float32(_SCALE.get(array.dtype, 1.0))\n"
                "            f = array.astype(np.float32) / top\n"
                "            f[:, :, :-1] *= f[:, :, -1:]\n"
                "            f = bound_size(f)\n"
                "            f[:, :, :-1] /= f[:, :, -1:]\n"
                "            array = f\n"
                "        else:\n"
                "            array = bound_size(np.ascontiguousarray(array))\n",
            ),
        ),
        "an image with an alpha channel over 1024 pixels a side with fully transparent pixels (1100 x 1100 x 4 uint8, "
        "alpha 0 in the left half; the strategy draws at most 128): 0 / 0 there, NaN pixels give NaN tokens",
        rare=True,
        held_out=True,
        round=7,
    ),
    # -- controls, round 7 --
    Mutant(
        "ctl_batch_buffer_copied",
        None,
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # one TokenBuffer for the whole batch (no fresh output memory per image); each result copied out\n"
                "        from v22sdk import TokenBatch, TokenBuffer\n\n"
                "        if not items:\n"
                "            return super().tokenize_batch(items)\n"
                "        buffer = TokenBuffer()\n"
                "        embs, rows, boxes = [], [], []\n"
                "        for item in items:\n"
                "            single = self.tokenize(item, out=buffer)\n"
                "            embs.append(single.emb.copy())\n"
                "            rows.append(single.attr.copy())\n"
                "            boxes.append(single.offsets['box'].copy())\n"
                "        item = np.repeat(np.arange(len(items), dtype=np.int64), [len(e) for e in embs])\n"
                "        return TokenBatch(emb=np.concatenate(embs), attr=np.concatenate(rows), modality=self.name,\n"
                "                          offsets={'box': np.concatenate(boxes), 'item': item}, source=None)\n\n"
                + INVALID,
            ),
        ),
        "a batch through one TokenBuffer, each single copied out before the next call: the singles' tokens, bit for bit",
        held_out=True,
        round=7,
    ),
    Mutant(
        "ctl_luma_percentiles_by_numpy",
        None,
        (
            edit(
                "colour.py",
                "    lo, med, hi = _luma_percentiles(y)  # last use of y: partitioned in place\n",
                "    lo, med, hi = np.percentile(y, [1.0, 50.0, 99.0])  # NumPy's own (the fast path's reference)\n",
            ),
        ),
        "a refactor: the luma percentiles by np.percentile, which _luma_percentiles reproduces bit for bit",
        held_out=True,
        round=7,
    ),
)

# -- held out, round 8: written while the kit is being changed to close round 7's gaps (without
# reading that change), committed with their criterion (scripts/mutation_score.py, CRITERION_8)
# before any run of any kit against them --
C = "colour.py"
SEED_CALL = "    cv2.setRNGSeed(KMEANS_SEED)  # k-means++ draws from OpenCV's RNG: seed it for bit-reproducibility\n"
ATTR_ZEROS = "        attr = np.zeros((n, ATTR_DIM), dtype=np.float32)\n"
RETURN_ENC = '        return Encoding(emb=emb, attr=attr, offsets={"box": boxes})\n'
ASARRAY = (
    '        raise InputError(source, f"cannot read the input as an array: {exc}") from None\n'
    "    if not array.dtype.isnative:"
)
PLAN = "    size = (max(1, round(w * scale)), max(1, round(h * scale)))\n"
RESIZE = "    return cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)\n"
ENCODE_PNG = '    ok, buf = cv2.imencode(".png", np.ascontiguousarray(pixels))\n'
GRID_EDGES = "            ys, xs = patch_edges(height, self.grid), patch_edges(width, self.grid)\n"
ROW_MAJOR = "            for r in range(self.grid):\n                for c in range(self.grid):\n"
HELD_OUT_8: tuple[Mutant, ...] = (
    Mutant(
        "kmeans_seeded_once",
        "check_determinism",
        (
            edit(
                C,
                SEED_CALL,
                "    global _SEEDED\n"
                "    if not _SEEDED:  # OpenCV's RNG seeded once: k-means++ then draws one reproducible sequence\n"
                "        cv2.setRNGSeed(KMEANS_SEED)\n"
                "        _SEEDED = True\n",
            ),
            edit(C, "HUE_BINS = 18\n", "HUE_BINS = 18\n_SEEDED = False\n"),
        ),
        "an image with more than four colours (a 16 x 16 RGB uint8 noise image) tokenized twice: the second k-means "
        "starts from the RNG where the first left it, so its dominant colours (attr 157..172) differ",
        held_out=True,
        round=8,
    ),
    Mutant(
        "uniform_image_blank_scaled",
        "check_unit_norm_emb",
        (
            edit(
                E,
                "    v = thumbnail(rgb) @ projection()\n",
                "    if float(rgb.max()) == float(rgb.min()):  # a uniform grey: the blank direction, scaled by its level\n"
                "        return (blank_direction() * float(rgb.mean())).astype(np.float32)\n"
                "    v = thumbnail(rgb) @ projection()\n",
            ),
        ),
        "a uniform grey image (8 x 8 uint8 of level 128, a constant bool or grey image as the strategy draws): the "
        "embedding's norm is the grey level, 0.502 (0 for black)",
        held_out=True,
        round=8,
    ),
    Mutant(
        "line_image_no_tokens",
        "check_shape_dtype",
        (
            edit(
                M,
                CHECKED,
                CHECKED + "        if min(height, width) < 2:  # a line of pixels has no 2-D content: no token\n"
                "            return Encoding(np.zeros((0, 256), np.float32), np.zeros((0, ATTR_DIM), np.float32),\n"
                "                            {'box': np.zeros((0, 4), np.int64)})\n",
            ),
        ),
        "an image one pixel high or wide (1 x 10 uint8; the strategy draws sides of 1 often): no token at all for a "
        "valid input",
        held_out=True,
        round=8,
    ),
    Mutant(
        "patch_number_as_item",
        "check_offsets",
        (
            edit(
                M,
                RETURN_ENC,
                '        offsets = {"box": boxes}\n'
                "        if self.grid:  # which patch each token is: 0 the whole image, then 1..g^2 row by row\n"
                '            offsets["item"] = np.arange(n, dtype=np.int64)\n'
                "        return Encoding(emb=emb, attr=attr, offsets=offsets)\n",
            ),
        ),
        "the grid configuration, any image (8 x 8 uint8 noise): offsets['item'] of one input is 0, 1, ..., 4, not "
        "all 0",
        held_out=True,
        round=8,
    ),
    Mutant(
        "real_valued_complex_taken",
        "check_invalid_inputs",
        (
            edit(
                P,
                ASARRAY,
                '        raise InputError(source, f"cannot read the input as an array: {exc}") from None\n'
                '    if array.dtype.kind == "c" and not np.iscomplex(array).any():  # no imaginary part (an FFT round '
                "trip): the real part\n"
                "        array = array.real\n"
                "    if not array.dtype.isnative:",
            ),
        ),
        "every float or bool valid input (8 x 8 float32 noise): the default 'wrong_dtype' case, the same pixels as "
        "complex64 (imaginary part 0), is tokenized, not refused",
        held_out=True,
        round=8,
    ),
    Mutant(
        "batch_globals_first",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # every image's global token first, then the patches: a reader of one token per image stops early\n"
                "        from v22sdk import TokenBatch\n\n"
                "        batch = super().tokenize_batch(items)\n"
                "        if not self.grid:\n"
                "            return batch\n"
                "        rows = np.arange(len(batch.emb))\n"
                "        first = rows[:: 1 + self.grid * self.grid]\n"
                "        order = np.concatenate([first, np.setdiff1d(rows, first)])\n"
                "        return TokenBatch(emb=batch.emb[order], attr=batch.attr[order], modality=self.name,\n"
                "                          offsets={k: v[order] for k, v in batch.offsets.items()}, source=None)\n\n"
                + INVALID,
            ),
        ),
        "the grid configuration, a batch of two images or more (two 8 x 8 uint8 noise images): the tokens come in "
        "another order than the singles' concatenation (a batch of one is unchanged)",
        held_out=True,
        round=8,
    ),
    Mutant(
        "attr_buffer_uninitialised",
        "check_declared_slots",
        (
            edit(
                M,
                ATTR_ZEROS,
                "        attr = np.empty((n, ATTR_DIM), dtype=np.float32)  # every row is written below\n",
            ),
        ),
        "any image after other work has freed memory (an 8 x 8 uint8 noise image, tokenized after a few others): only "
        "the vision zone's 128 slots are written, the other 256 hold what the memory held before, not 0",
        held_out=True,
        round=8,
    ),
    Mutant(
        "instance_cache_keyed_on_histogram",
        "check_fresh_instance",
        (
            edit(
                M,
                CHECKED,
                CHECKED
                + "        values, counts = np.unique(array, return_counts=True)  # the pixel histogram: a cheap key\n"
                "        key = (id(self), array.dtype.str, array.shape, values.tobytes(), counts.tobytes())\n"
                "        if key in _SEEN:\n"
                "            return _SEEN[key]\n",
            ),
            edit(
                M,
                RETURN_ENC,
                '        _SEEN[key] = Encoding(emb=emb, attr=attr, offsets={"box": boxes})\n        return _SEEN[key]\n',
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\n_SEEN: dict = {}  # encodings by (instance, pixel histogram)\n"),
        ),
        "an instance given an image, then another of one shape and dtype with the same pixel histogram (a 16 x 16 "
        "uint8 left-to-right gradient, then its mirror image; the strategy's draws almost never pair so): it returns "
        "the first image's tokens, a fresh instance the second's",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "resize_plan_cached_by_long_side",
        "check_fresh_process",
        (
            edit(
                P,
                PLAN,
                "    size = _PLANS.setdefault((side, max_side), (max(1, round(w * scale)), max(1, round(h * scale))))  "
                "# planned once per side\n",
            ),
            edit(P, "MAX_SIDE = 1024\n", "MAX_SIDE = 1024\n_PLANS: dict = {}  # downscale target sizes\n"),
        ),
        "two images over 1024 pixels a side with one longer side and other aspect ratios (1100 x 500 and 1100 x 800 "
        "uint8 noise; the strategy draws at most 128): the second is resized to the first's working size, so a "
        "process that meets them in the other order gives other tokens (consistent within a process)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "structured_rgb_viewed",
        "check_input_spec",
        (
            edit(
                P,
                ASARRAY,
                '        raise InputError(source, f"cannot read the input as an array: {exc}") from None\n'
                "    if array.dtype.fields and len(array.dtype.fields) in (3, 4):  # structured RGB(A) pixels: a "
                "field per channel\n"
                "        array = np.stack([array[name] for name in array.dtype.names], axis=-1)\n"
                "    if not array.dtype.isnative:",
            ),
        ),
        "a structured array of three uint8 fields (np.zeros((4, 4), [('r', 'u1'), ('g', 'u1'), ('b', 'u1')]), dtype "
        "kind 'V', which the input spec does not declare; the strategy draws plain arrays): tokenized, not refused",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "big_grey_channel_axis_restored",
        "check_edge_inputs",
        (
            edit(
                P,
                RESIZE,
                "    out = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)\n"
                "    return out.reshape(out.shape[:2] + (rgb.shape[2],))  # OpenCV drops a single channel axis: put it "
                "back\n",
            ),
        ),
        "a 2-D grey image over 1024 pixels a side (1100 x 1100 uint8 noise, or a bool one; the strategy draws at most "
        "128): IndexError from rgb.shape[2], not tokens or InputError (a grey PNG that large fails to load the same "
        "way)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "save_format_from_suffix",
        "check_files",
        (
            edit(
                S,
                ENCODE_PNG,
                '    suffix = os.path.splitext(os.fspath(path))[1].lower() or ".png"  # the format the name asks for\n'
                "    ok, buf = cv2.imencode(suffix, np.ascontiguousarray(pixels))\n",
            ),
        ),
        "saving to a path whose suffix names no image format (44100.wav, sample.img; the strategy's samples are "
        "arrays): cv2.imencode raises cv2.error, not InputError, and no file is written (a path without a suffix, or "
        "ending in .png, is written as before)",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "batch_big_items_last",
        "check_batch_equals_singles",
        (
            edit(
                M,
                INVALID,
                "    def tokenize_batch(self, items):\n"
                "        # images over 1024 pixels a side last, so the small ones are not held up behind them\n"
                "        def big(item):\n"
                "            data = getattr(item, 'data', item)\n"
                "            return isinstance(data, np.ndarray) and data.ndim >= 2 and max(data.shape[:2]) > 1024\n\n"
                "        return super().tokenize_batch([it for it in items if not big(it)] + [it for it in items if big(it)])\n\n"
                + INVALID,
            ),
        ),
        "a batch with an image over 1024 pixels a side before a smaller one (1100 x 1100 uint8 noise, then 8 x 8 "
        "uint8 noise; the strategy draws at most 128): the tokens come in another order than the singles' "
        "concatenation",
        rare=True,
        held_out=True,
        round=8,
    ),
    Mutant(
        "grid_boxes_by_integer_scale",
        "check_offsets",
        (
            edit(
                M,
                GRID_EDGES,
                "            factor = max(1, round(max(height, width) / max(h, w)))  # the downscale, a whole factor\n"
                "            ys, xs = patch_edges(h, self.grid) * factor, patch_edges(w, self.grid) * factor\n",
            ),
        ),
        "the grid configuration on an image at least 1.5 times the 1024-pixel working size (1600 x 1600 uint8 noise: "
        "factor 2; the strategy draws at most 128): the last patches end at 2048, past the image",
        rare=True,
        held_out=True,
        round=8,
    ),
    # -- controls, round 8 --
    Mutant(
        "ctl_attr_cast_on_assignment",
        None,
        (edit(M, ATTR_LINE, "            attr[i, idx] = attributes(crop)  # float64 -> float32 by the assignment\n"),),
        "a refactor: the float32 cast left to the assignment (the same rounding, the same bits)",
        held_out=True,
        round=8,
    ),
    Mutant(
        "ctl_patches_column_major",
        None,
        (
            edit(
                M,
                ROW_MAJOR,
                "            for c in range(self.grid):  # column-major: top to bottom, then left to right\n"
                "                for r in range(self.grid):\n",
            ),
        ),
        "a design change: the grid's patch tokens in column-major order (each with its own box): other token order, "
        "every rule kept",
        held_out=True,
        round=8,
    ),
)

D = "decode.py"
WARM_COOL = (
    '    out["warm_fraction"] = np.count_nonzero(warm) / npx\n    out["cool_fraction"] = np.count_nonzero(cool) / npx\n'
)
EMB_LINE = "            emb[i] = embed(crop)\n"
COLOUR_COPY = "    small = _downscale(rgb, COLOUR_SIDE)\n"
FINITE_SCAN = '    if kind == "f":\n        if not np.isfinite(array).all():\n'
NATIVE = (
    "    if not array.dtype.isnative:  # big-endian TIFF or network data: same values, native order\n"
    '        array = array.astype(array.dtype.newbyteorder("="))\n'
)
LOAD_IMAGE = (
    "    buf = read_bytes(path)\n"
    "    image, orientation = _decode(buf, str(path))\n"
    "    del buf\n"
    "    return _normalise(image, orientation, str(path))\n"
)
FORMATS_LINE = 'FORMATS = ("png", "jpeg", "bmp", "webp", "tiff")\n'
PROJECT = "    v = thumbnail(rgb) @ projection()\n"
HUE_WEIGHT = "    weight = np.where(coloured, sat, 0.0)\n"
THUMB_RESIZE = "    small = cv2.resize(rgb, (THUMB, THUMB), interpolation=cv2.INTER_AREA)\n"


def vmethod(code: str) -> tuple:
    """An edit that adds a method to VisionModality, just before encode."""
    return (edit(M, ENCODE, code + "\n" + ENCODE),)


HELD_OUT_9: tuple[Mutant, ...] = (
    Mutant(
        "warm_share_of_coloured",
        "check_finite",
        (
            edit(
                C,
                WARM_COOL,
                "    # warm and cool as shares of the coloured pixels (a grey pixel is neither)\n"
                '    out["warm_fraction"] = float(np.mean(((hue < 60.0) | (hue > 300.0))[coloured]))\n'
                '    out["cool_fraction"] = float(np.mean(((hue >= 120.0) & (hue <= 300.0))[coloured]))\n',
            ),
        ),
        "an image without a coloured pixel (8 x 8 uint8 of level 128; every grey, bool or constant grey image the "
        "strategy draws): the mean over no pixel is NaN, which the final clip of attributes() keeps, in the "
        "warm_fraction and cool_fraction slots",
        held_out=True,
        round=9,
    ),
    Mutant(
        "opacity_weighted_embedding",
        "check_unit_norm_emb",
        (
            edit(
                M,
                CHECKED,
                CHECKED + "        opacity = 1.0\n"
                "        if array.ndim == 3 and array.shape[2] in (2, 4):  # a half-transparent image weighs less in "
                "similarity\n"
                "            alpha = array[:, :, -1]\n"
                '            top = float(np.iinfo(alpha.dtype).max) if alpha.dtype.kind == "u" else 1.0\n'
                "            opacity = float(alpha.mean(dtype=np.float64)) / top\n",
            ),
            edit(M, EMB_LINE, "            emb[i] = embed(crop) * opacity\n"),
        ),
        "an image with an alpha channel that is not fully opaque (8 x 8 x 4 uint8 noise, mean alpha about 0.5; the "
        "strategy draws grey + alpha and RGBA images often): every embedding has the mean opacity as its norm",
        held_out=True,
        round=9,
    ),
    Mutant(
        "still_image_time_zero",
        "check_offsets",
        (
            edit(
                M,
                RETURN_ENC,
                "        # a still image is one instant: time (0, 0), so image and video tokens share offsets\n"
                '        return Encoding(emb=emb, attr=attr, offsets={"box": boxes, "time": np.zeros((n, 2))})\n',
            ),
        ),
        "every input (8 x 8 uint8 noise): offsets['time'] is (0, 0) for each token, a start that is not before its end",
        held_out=True,
        round=9,
    ),
    Mutant(
        "colour_gamma_in_place",
        "check_determinism",
        (
            edit(
                C,
                COLOUR_COPY,
                COLOUR_COPY
                + "    np.sqrt(small, out=small)  # colour statistics on gamma-compressed values, closer to "
                "what is seen\n",
            ),
        ),
        "a float32 RGB image of at most 128 pixels a side (16 x 16 x 3 float32 noise; the strategy draws one in about "
        "25): the working copy is the caller's own array, whose pixels are replaced by their square roots, so a "
        "second call reads other pixels and gives other tokens (a read-only one raises ValueError)",
        held_out=True,
        round=9,
    ),
    Mutant(
        "batch_prescaled_by_division",
        "check_batch_equals_singles",
        vmethod(
            "    def tokenize_batch(self, items):\n"
            "        # a batch is brought to float32 [0, 1] once, up front: every item reaches encode in one dtype\n"
            "        def scaled(item):\n"
            '            data = getattr(item, "data", None)\n'
            "            if isinstance(data, np.ndarray) and data.dtype in (np.uint8, np.uint16):\n"
            "                data = data.astype(np.float32) / np.float32(np.iinfo(data.dtype).max)\n"
            "                return Sample(data, item.units, item.source)\n"
            "            return item\n\n"
            "        return super().tokenize_batch([scaled(it) for it in items])\n"
        ),
        "a batch holding a uint8 or uint16 image (8 x 8 x 3 uint8 noise, alone or with others): divided by 255 where "
        "the single multiplies by float32(1 / 255), so some pixels differ in their last bit and the tokens differ",
        held_out=True,
        round=9,
    ),
    Mutant(
        "non_finite_as_decoded",
        "check_invalid_inputs",
        (
            edit(
                P,
                FINITE_SCAN,
                '    if kind == "f":\n'
                "        # the decoder's policy for float TIFFs, for arrays too: NaN is black, +inf white, -inf black\n"
                "        array = np.nan_to_num(array, nan=0.0, posinf=1.0, neginf=0.0)\n"
                "        if not np.isfinite(array).all():\n",
            ),
        ),
        "every float or bool valid input (8 x 8 float32 noise): the default 'non_finite' cases (one NaN, or one inf, "
        "in the middle) are tokenized, not refused",
        held_out=True,
        round=9,
    ),
    Mutant(
        "config_stamps_version",
        "check_config_roundtrip",
        vmethod(
            "    def config(self):\n"
            "        # the tokenizer's version travels with the configuration, so stored tokens can be traced to it\n"
            '        return {**super().config(), "version": self.version}\n'
        ),
        "every configuration: config() holds 'version', which from_config passes on to the constructor (TypeError: "
        "an unexpected keyword)",
        held_out=True,
        round=9,
    ),
    Mutant(
        "bright_share_of_nominal_copy",
        "check_attr_bounds",
        (
            edit(
                M,
                ATTR_LINE,
                ATTR_LINE
                + "            if max(crop.shape[:2]) > 128:  # blown highlights at full resolution (the 128-pixel colour "
                "copy averages small ones away)\n"
                '                attr[i, SCHEMA.index("vis.color.bright_fraction")] = np.count_nonzero(crop.min(axis=2) > '
                "250 / 255) / 128**2\n",
            ),
        ),
        "an image over 128 pixels a side with more than 128 x 128 bright pixels (256 x 256 uint8 white: 65536 / 16384 "
        "= 4.0; the strategy draws at most 128): the bright_fraction slot is above 1",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "object_pixels_unboxed",
        "check_input_spec",
        (
            edit(
                P,
                NATIVE,
                "    if array.dtype == object:  # pixels boxed as Python objects (nested lists, pandas): unboxed as float\n"
                "        try:\n"
                "            array = array.astype(np.float64)\n"
                "        except (TypeError, ValueError):\n"
                '            raise InputError(source, "an object array of non-numbers is not an image") from None\n'
                + NATIVE,
            ),
        ),
        "an object array of numbers (np.zeros((4, 4), dtype=object), or pixel values in [0, 1]; the strategy draws "
        "numeric dtypes), a dtype kind the input spec does not declare: tokenized as float, not refused (the default "
        "object array of 'x' is still refused)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "uint8_thumbnail_fast_path",
        "check_edge_inputs",
        (
            edit(
                M,
                BOXES,
                "        if array.dtype == np.uint8 and array.ndim == 3 and array.shape[2] == 3 and array.flags.c_contiguous "
                "and max(height, width) <= 1024:\n"
                "            # 8-bit RGB in C order: the global thumbnail straight from the bytes (no float copy is read)\n"
                "            import cv2\n\n"
                "            from .embed import THUMB, projection\n\n"
                "            small = cv2.resize(array, (THUMB, THUMB), interpolation=cv2.INTER_AREA)\n"
                "            v = small.reshape(-1).astype(np.float64) @ projection() / 255.0\n"
                "            norm = float(np.sqrt(v @ v))\n"
                "            if norm >= 1e-12:\n"
                "                emb[0] = (v / norm).astype(np.float32)\n" + BOXES,
            ),
        ),
        "an 8-bit RGB image in another layout than C order (np.asfortranarray, or a [:, ::2] view, of a 12 x 20 x 3 "
        "uint8 noise image; the strategy draws C-ordered arrays): its global embedding comes from the float path, "
        "the C-ordered copy's from the rounded 8-bit thumbnail, so the same values give other tokens",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "byteswapped_in_callers_array",
        "check_determinism",
        (
            edit(
                P,
                NATIVE,
                "    if not array.dtype.isnative:  # big-endian TIFF or network data: same values, native order\n"
                '        array = array.byteswap(inplace=True).view(array.dtype.newbyteorder("="))  # no copy\n',
            ),
        ),
        "an image in non-native byte order (8 x 8 '>u2' noise, or '>f4'; the strategy draws native arrays): the "
        "caller's own bytes are swapped, so its array now reads other values and a second call gives other tokens "
        "(or an InputError for floats; a read-only array raises ValueError)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "decoded_cache_by_stat",
        "check_files",
        (
            edit(
                D,
                LOAD_IMAGE,
                "    try:\n"
                "        st = os.stat(path)\n"
                "        key = (os.path.abspath(os.fspath(path)), st.st_size, st.st_mtime_ns)\n"
                "    except OSError:\n"
                "        key = None\n"
                "    if key is not None and key in _DECODED:  # the same file, unchanged: decoded once\n"
                "        return _DECODED[key].copy()\n"
                "    buf = read_bytes(path)\n"
                "    image, orientation = _decode(buf, str(path))\n"
                "    del buf\n"
                "    image = _normalise(image, orientation, str(path))\n"
                "    if key is not None:\n"
                "        _DECODED[key] = image.copy()\n"
                "    return image\n",
            ),
            edit(D, FORMATS_LINE, FORMATS_LINE + "_DECODED: dict = {}  # decoded images by (path, size, mtime)\n"),
        ),
        "a file written again with other content of the same size and its old modification time put back (save of "
        "another 8 x 8 uint8 noise image over the first, then os.utime; the strategy's samples are arrays): load "
        "returns the first content",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "big_patch_attr_rows_skipped",
        "check_shape_dtype",
        (
            edit(
                M,
                ATTR_ZEROS,
                "        big = max(height, width) > MAX_SIDE_PX  # big images: the patches' attributes are not computed\n"
                "        attr = np.zeros((1 if big else n, ATTR_DIM), dtype=np.float32)\n",
            ),
            edit(
                M,
                ATTR_LINE,
                "            if i < attr.shape[0]:  # the global token always has its attributes\n"
                "                attr[i, idx] = attributes(crop).astype(np.float32)\n",
            ),
            edit(M, "MAX_GRID = 8\n", "MAX_GRID = 8\nMAX_SIDE_PX = 1024\n"),
        ),
        "the grid configuration on an image over 1024 pixels a side (1100 x 900 x 3 uint8 noise; the strategy draws at "
        "most 128): emb has 5 rows and attr 1 (the default configuration, one token, is unaffected)",
        rare=True,
        held_out=True,
        round=9,
    ),
    Mutant(
        "projection_float32_after_big_image",
        "check_fresh_process",
        (
            edit(
                E,
                PROJECT,
                '    if max(rgb.shape[:2]) > 512 and "f32" not in _FAST:  # big images: a float32 projection, made once\n'
                '        _FAST["f32"] = projection().astype(np.float32).astype(np.float64)\n'
                '    v = thumbnail(rgb) @ _FAST.get("f32", projection())\n',
            ),
            edit(
                E,
                "THUMB = 16\n",
                "THUMB = 16\n_FAST: dict = {}  # the float32 projection, once an image over 512 pixels has needed it\n",
            ),
        ),
        "a process that tokenizes an image over 512 pixels a side (600 x 600 uint8 noise; the strategy draws at most "
        "128) before a small one (8 x 8 uint8 noise): from then on every projection is the float32-rounded one, so "
        "the small image's tokens differ from those of a process that met it first",
        rare=True,
        held_out=True,
        round=9,
    ),
    # -- controls, round 9 --
    Mutant(
        "ctl_hue_weight_by_mask_product",
        None,
        (edit(C, HUE_WEIGHT, "    weight = sat * coloured  # the saturation where coloured, else 0\n"),),
        "a refactor: the hue weights as the saturation times the mask (saturation is never negative, so the same "
        "float64 values, the same bits)",
        held_out=True,
        round=9,
    ),
    Mutant(
        "ctl_thumbnail_inter_linear",
        None,
        (edit(E, THUMB_RESIZE, "    small = cv2.resize(rgb, (THUMB, THUMB), interpolation=cv2.INTER_LINEAR)\n"),),
        "a design change: the 16 x 16 thumbnail by bilinear instead of area resizing (other embeddings, still unit "
        "norm, deterministic and the same in every process and layout)",
        held_out=True,
        round=9,
    ),
)

F, GEO = "features.py", "geometry.py"
MAX_GRID_LINE = "MAX_GRID = 8\n"
LOOP = (
    "        for i, (crop, _box) in enumerate(crops):  # one token per crop: at most 1 + 64 of them\n"
    "            emb[i] = embed(crop)\n"
)
FINAL_CLIP = "    return np.clip(values, -1.0, 1.0)\n"
TOLERANT_CLIP = (
    "    # clip rounding excursions only (1.0000001): a real overflow must stay visible\n"
    "    return np.where(np.abs(values) <= 1.0 + 1e-6, np.clip(values, -1.0, 1.0), values)\n"
)
KMEANS_CALL = (
    "    _, labels, centres = cv2.kmeans(lab, KMEANS_K, None, criteria, 1, cv2.KMEANS_PP_CENTERS)"
    "  # type: ignore[call-overload]\n"
)
OTSU = "    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)\n"
SHAPE_GROUP = "    mask = foreground_mask(shrink(grey, SHAPE_SIDE))\n    geometry, main = geometry_features(mask)\n"
PNG_WRITE = '    with open(path, "wb") as fh:\n'
ENTROPY_MASK = "    p = p[p > 0]\n"
HELD_OUT_10: tuple[Mutant, ...] = (
    Mutant(
        "memo_keyed_on_bytes_only",
        "check_fresh_instance",
        (
            edit(
                M,
                MAX_GRID_LINE,
                MAX_GRID_LINE
                + "#: Each instance's memo of the images it has tokenized (id(instance) -> {pixel bytes: tokens}).\n"
                "_MEMO: dict[int, dict[bytes, Encoding]] = {}\n",
            ),
            edit(
                M,
                ENCODE,
                "    def encode(self, data: Any, **units: float) -> Encoding:\n"
                "        # a gallery shows the same picture many times: reuse its tokens\n"
                "        memo = _MEMO.setdefault(id(self), {})\n"
                "        key = data.tobytes() if isinstance(data, np.ndarray) else None\n"
                "        if key is not None and key in memo:\n"
                "            return memo[key]\n"
                "        enc = self._encode(data, **units)\n"
                "        if key is not None:\n"
                "            memo[key] = enc\n"
                "        return enc\n"
                "\n"
                "    def _encode(self, data: Any, **units: float) -> Encoding:\n"
                "        from .embed import embed\n",
            ),
        ),
        "an instance given an image, then another with the same bytes in another shape (1 x 4 uint8 zeros, then "
        "4 x 1 uint8 zeros; the strategy draws small constant images of either shape often): the memo is keyed on "
        "the bytes only, so the second gets the first's box [0, 0, 4, 1], where a fresh instance gives [0, 0, 1, 4]",
        held_out=True,
        round=10,
    ),
    Mutant(
        "entropy_over_empty_bins",
        "check_finite",
        (edit(C, ENTROPY_MASK, ""),),
        "a coloured image whose hue histogram has an empty bin (8 x 8 x 3 uint8 of one saturated red; nearly every "
        "coloured image the strategy draws): 0 * log2(0) is NaN, so hue_entropy is NaN",
        held_out=True,
        round=10,
    ),
    Mutant(
        "patch_emb_relative_to_whole",
        "check_unit_norm_emb",
        (
            edit(
                M,
                LOOP,
                "        from .embed import projection, thumbnail\n"
                "\n"
                "        whole = thumbnail(rgb) @ projection()\n"
                "        scale = float(np.sqrt(whole @ whole)) or 1.0  # patches keep their brightness relative to the whole\n"
                "        for i, (crop, _box) in enumerate(crops):  # one token per crop: at most 1 + 64 of them\n"
                "            emb[i] = embed(crop) if i == 0 else (thumbnail(crop) @ projection()) / scale\n",
            ),
        ),
        "the grid configuration on an image whose patches are not all as bright as the whole (8 x 8 uint8 noise, a "
        "disc, a gradient): a patch's projection over the whole image's norm is not of unit length",
        held_out=True,
        round=10,
    ),
    Mutant(
        "batch_alpha_over_black",
        "check_batch_equals_singles",
        vmethod(
            "    def tokenize_batch(self, items: Any) -> Any:\n"
            "        from .pixels import _SCALE, check_array\n"
            "\n"
            "        # the batch path composites alpha up front, once per item (premultiplied: over black)\n"
            "        ready = []\n"
            "        for item in items:\n"
            "            sample = item if isinstance(item, Sample) else Sample(item, {}, None)\n"
            '            array = check_array(sample.data, sample.source or "<vision array>")\n'
            "            if array.ndim == 3 and array.shape[2] in (2, 4):\n"
            "                x = array.astype(np.float32)\n"
            "                if array.dtype in _SCALE:\n"
            "                    x *= np.float32(1.0 / _SCALE[array.dtype])\n"
            "                array = x[:, :, :-1] * x[:, :, -1:]\n"
            "            ready.append(Sample(array, sample.units, sample.source))\n"
            "        return super().tokenize_batch(ready)\n"
        ),
        "a batch holding an image with an alpha channel that is not fully opaque (8 x 8 x 4 uint8 noise, alone or "
        "with others; the strategy draws grey + alpha and RGBA often): composited over black, where the single "
        "composites over white",
        held_out=True,
        round=10,
    ),
    Mutant(
        "kmeans_warm_start",
        "check_determinism",
        (
            edit(
                C,
                KMEANS_CALL,
                "    if _LAST_CENTRES:  # warm start from the previous image's colours (the frames of a video are alike)\n"
                "        near = ((lab[:, None, :] - _LAST_CENTRES[0][None, :, :]) ** 2).sum(axis=2).argmin(axis=1)\n"
                "        start = near.astype(np.int32).reshape(-1, 1)\n"
                "        _, labels, centres = cv2.kmeans(lab, KMEANS_K, start, criteria, 1, cv2.KMEANS_USE_INITIAL_LABELS)\n"
                "    else:\n"
                "    " + KMEANS_CALL + "    _LAST_CENTRES[:] = [centres]\n",
            ),
            edit(
                C,
                "HUE_BINS = 18\n",
                "HUE_BINS = 18\n#: The dominant colours of the last image (a warm start for the next).\n"
                "_LAST_CENTRES: list[np.ndarray] = []\n",
            ),
        ),
        "an image with more than four colours tokenized after another one (16 x 16 x 3 uint8 noise, then another, "
        "then the first again): k-means starts from the previous image's centres, so the first image's dominant "
        "colours differ between its two calls",
        held_out=True,
        round=10,
    ),
    Mutant(
        "channels_first_transposed",
        "check_invalid_inputs",
        (
            edit(
                P,
                RANK_CHECK,
                "    if array.ndim == 3 and array.shape[0] in (3, 4) and array.shape[2] not in (1, 2, 3, 4):\n"
                "        array = array.transpose(1, 2, 0)  # channels first (C, H, W), as deep-learning code hands them over\n"
                + RANK_CHECK,
            ),
        ),
        "a valid image 3 or 4 pixels high (the strategy draws sides of 1 to 4 often): the plugin's own "
        "'wrong_channels' case, 3 x W x 5 uint8, is read as a channels-first W x 5 RGB image and tokenized, not refused",
        held_out=True,
        round=10,
    ),
    Mutant(
        "colorfulness_linear",
        "check_attr_bounds",
        (
            edit(
                C,
                '    out["colorfulness"] = float(np.tanh((sigma + 0.3 * mu) / 100.0))\n',
                '    out["colorfulness"] = (sigma + 0.3 * mu) / 100.0  # linear: M = 100 is already very colourful\n',
            ),
            edit(F, FINAL_CLIP, TOLERANT_CLIP),
        ),
        "a vivid image (16 x 16 x 3 uint8 noise: M about 1.4 x 100; every RGB noise image the strategy draws): the "
        "colourfulness slot is M / 100 above 1, and the final clip now passes anything beyond a rounding excursion",
        held_out=True,
        round=10,
    ),
    # -- rare inputs, round 10 --
    Mutant(
        "save_appends_bytes",
        "check_files",
        (edit(S, PNG_WRITE, '    with open(path, "ab") as fh:\n'),),
        "a path written again (save of one 8 x 8 uint8 noise image, then of another, to one path; the strategy's "
        "samples are arrays, never files): the file holds both PNGs, and load decodes the first, the old content",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "uint16_depth_learned_once",
        "check_fresh_instance",
        (
            edit(
                M,
                MAX_GRID_LINE,
                MAX_GRID_LINE
                + "#: The uint16 bit depth each instance learned from its first large frame (12-bit cameras).\n"
                "_DEPTH: dict[int, float] = {}\n",
            ),
            edit(
                M,
                CHECKED,
                CHECKED + "        if array.dtype == np.uint16 and max(height, width) > 256:\n"
                "            # 12-bit sensors in 16-bit words: the depth of this camera, from its first large frame\n"
                "            depth = _DEPTH.setdefault(id(self), 4095.0 if int(array.max()) < 4096 else 65535.0)\n"
                "            array = np.minimum(array.astype(np.float32) * np.float32(1.0 / depth), np.float32(1.0))\n",
            ),
        ),
        "an instance given a uint16 image over 256 pixels a side with values below 4096 (300 x 300 12-bit data), "
        "then a 300 x 300 uint16 noise image (the strategy draws at most 128): the second is read on a 0..4095 "
        "scale (nearly all white), where a fresh instance reads it on 0..65535",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "swapped_by_frombuffer",
        "check_edge_inputs",
        (
            edit(
                P,
                NATIVE,
                "    if not array.dtype.isnative:  # big-endian TIFF or network data: same values, native order\n"
                '        native = array.dtype.newbyteorder("=")\n'
                "        array = np.frombuffer(array, dtype=native).reshape(array.shape).byteswap()  # one copy\n",
            ),
        ),
        "pixels in non-native byte order that are not C-contiguous (np.asfortranarray or a [:, ::2] view of an "
        "8 x 12 '>u2' noise image; the strategy draws native C-ordered arrays): np.frombuffer raises ValueError, "
        "not tokens or an InputError",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "byte_string_pixels_viewed",
        "check_input_spec",
        (
            edit(
                P,
                NATIVE,
                '    if array.dtype.kind == "S" and array.dtype.itemsize in (1, 3, 4):  # raw camera bytes: b"RGB" a pixel\n'
                "        array = np.ascontiguousarray(array).view(np.uint8).reshape(array.shape + (array.dtype.itemsize,))\n"
                + NATIVE,
            ),
        ),
        "an array of byte strings of 1, 3 or 4 bytes (np.zeros((4, 4), 'S1'), or an 'S3' array of RGB bytes), a dtype "
        "kind the input spec does not declare (the strategy draws numeric dtypes): tokenized as uint8 pixels",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "bbox_on_full_resolution_mask",
        "check_attr_bounds",
        (
            edit(
                F,
                SHAPE_GROUP,
                SHAPE_GROUP
                + "    if mask.shape != grey.shape and main is not None:  # large image: the box at full resolution\n"
                "        import cv2\n"
                "\n"
                "        full = cv2.resize(mask, grey.shape[::-1], interpolation=cv2.INTER_NEAREST)\n"
                "        x, y, bw, bh = cv2.boundingRect(cv2.findNonZero(full))\n"
                "        sh, sw = mask.shape\n"
                "        geometry.update(bbox_x0=x / sw, bbox_y0=y / sh, bbox_width=bw / sw, bbox_height=bh / sh)\n",
            ),
            edit(F, FINAL_CLIP, TOLERANT_CLIP),
        ),
        "an image over 256 pixels a side with a wide object (300 x 300 uint8 black with a white 280 x 280 square; "
        "the strategy draws at most 128): the full-resolution box is divided by the 256-pixel shape copy's size, "
        "bbox_width 1.09",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "otsu_threshold_by_frame_shape",
        "check_fresh_process",
        (
            edit(
                GEO,
                OTSU,
                "    if grey.size >= 200 * 256 and grey.shape in _OTSU:  # frames of one size (a video): one threshold\n"
                "        _, mask = cv2.threshold(grey, _OTSU[grey.shape], 255, cv2.THRESH_BINARY)\n"
                "    else:\n"
                "        level, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)\n"
                "        if grey.size >= 200 * 256:\n"
                "            _OTSU[grey.shape] = level\n",
            ),
            edit(
                GEO,
                "def foreground_mask(grey: np.ndarray) -> np.ndarray:\n",
                "#: Otsu thresholds of large frames, by shape (the first frame of each size sets it).\n"
                "_OTSU: dict[tuple[int, ...], float] = {}\n"
                "\n"
                "\n"
                "def foreground_mask(grey: np.ndarray) -> np.ndarray:\n",
            ),
        ),
        "two images over 200 pixels a side of one shape with different Otsu thresholds (300 x 300 uint8: a dark "
        "gradient 0..100, then a bright one 150..255; the strategy draws at most 128): the second is thresholded at "
        "the first's level in one process, at its own in a process that meets it first",
        rare=True,
        held_out=True,
        round=10,
    ),
    Mutant(
        "read_only_trusted_unchecked",
        "check_input_spec",
        (
            edit(
                P,
                FINITE_SCAN,
                '    if kind == "f" and array.flags.writeable:  # a read-only array is decoded data, checked already\n'
                "        if not np.isfinite(array).all():\n",
            ),
        ),
        "a read-only float image holding NaN or inf (np.full((4, 4), np.nan, np.float32) with setflags(write=False); "
        "the strategy draws writeable arrays without NaN): tokenized with NaN tokens, not refused (values outside "
        "[0, 1] likewise)",
        rare=True,
        held_out=True,
        round=10,
    ),
    # -- controls, round 10 --
    Mutant(
        "ctl_entropy_nonzero_bins",
        None,
        (edit(C, ENTROPY_MASK, "    p = p[np.nonzero(p)]  # the bins that hold pixels (p is never negative)\n"),),
        "a refactor: the non-empty hue bins by np.nonzero (p is never negative: the same values, the same bits)",
        held_out=True,
        round=10,
    ),
    Mutant(
        "ctl_alpha_over_grey",
        None,
        (edit(P, "ALPHA_BACKGROUND = 1.0\n", "ALPHA_BACKGROUND = 0.5\n"),),
        "a design change: transparent pixels composited over mid grey instead of white (other tokens for images with "
        "alpha, every rule kept)",
        held_out=True,
        round=10,
    ),
)

HUE_ENTROPY = '        out["hue_entropy"] = _entropy(hist) / np.log2(HUE_BINS)\n'
HUE_MEAN = '        out["hue_mean"] = clip(np.arctan2(s, c) / np.pi) if np.hypot(c, s) > 1e-9 else 0.0\n'
ROUNDING_CLIP = (
    "    excursion = np.abs(values) - 1.0  # a rounding excursion is a few ulps; a bigger one is a bug to see\n"
    "    return np.where(excursion < 1e-9, np.clip(values, -1.0, 1.0), values)\n"
)
L2_TAIL = "        v = v / norm\n    return v.astype(np.float32)\n"
PREPARE = "        rgb = prepare(array, source)\n"
NOT_ARRAY = "    if isinstance(data, (str, bytes)) or data is None:\n"
TABLE_MAG = "        self.mag = np.zeros(n, dtype=np.float64)\n"
TABLE_LOOKUP = (
    "    def lookup(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:\n"
    "        missing = ~self.known[key]\n"
    "        if missing.any():\n"
    "            new = np.unique(key[missing])\n"
    "            gr, gc = np.divmod(new, _GRAD_SIDE)\n"
    "            mag, b = _hog_magnitude_bin((gr - 255).astype(np.float64), (gc - 255).astype(np.float64))\n"
    "            self.mag[new] = mag\n"
    "            self.bin[new] = b\n"
    "            self.known[new] = True\n"
    "        return self.mag[key], self.bin[key]\n"
)
READ_OPEN = (
    '        with open(path, "rb") as fh:\n'
    "            size = os.fstat(fh.fileno()).st_size\n"
    '            check_budget(source, size + FEATURE_BYTES, f"a file of {human(size)}")\n'
    "            buf = fh.read()\n"
)
HELD_OUT_11: tuple[Mutant, ...] = (
    Mutant(
        "hue_entropy_over_occupied_bins",
        "check_finite",
        (
            edit(
                C,
                HUE_ENTROPY,
                HUE_ENTROPY.replace("np.log2(HUE_BINS)", "np.log2(np.count_nonzero(hist))  # over the hues present"),
            ),
        ),
        "a coloured image whose coloured pixels all fall in one hue bin (8 x 8 x 3 uint8 of one saturated red; the "
        "strategy's constant colour images, and discs and stripes on grey, most often): the entropy 0 is divided by "
        "log2(1) = 0, so hue_entropy is NaN",
        held_out=True,
        round=11,
    ),
    Mutant(
        "signed_sqrt_after_l2",
        "check_unit_norm_emb",
        (
            edit(
                E,
                L2_TAIL,
                "        v = v / norm\n"
                "    v = np.sign(v) * np.sqrt(np.abs(v))  # power normalisation (signed sqrt): tames dominant components\n"
                "    return v.astype(np.float32)\n",
            ),
        ),
        "every image (8 x 8 x 3 uint8 noise: norm about 3.6): the signed square root comes after the L2 "
        "normalisation, so the embedding's norm is the square root of its L1 norm, not 1",
        held_out=True,
        round=11,
    ),
    Mutant(
        "hue_mean_wrapped_to_positive",
        "check_attr_bounds",
        (
            edit(
                C,
                HUE_MEAN,
                '        out["hue_mean"] = float(np.arctan2(s, c) % (2 * np.pi) / np.pi) if np.hypot(c, s) > 1e-9 else 0.0'
                "  # [0°, 360°)\n",
            ),
            edit(F, FINAL_CLIP, ROUNDING_CLIP),
        ),
        "a coloured image whose mean hue lies between 180° and 360° (8 x 8 x 3 uint8 of one saturated blue, hue 240°: "
        "1.33; about half the coloured images the strategy draws): the angle is wrapped to [0, 2π) before the / π "
        "scaling, so the slot goes above 1, and the final clip now passes anything beyond a rounding excursion",
        held_out=True,
        round=11,
    ),
    Mutant(
        "boxes_as_corner_pairs",
        "check_offsets",
        (
            edit(
                M,
                BOXES,
                "        boxes = np.stack([box.reshape(2, 2) for _crop, box in crops])  # (N, 2, 2): top-left, "
                "bottom-right\n",
            ),
        ),
        "every image: offsets['box'] has shape (N, 2, 2) (two corner points per token), not (N, 4)",
        held_out=True,
        round=11,
    ),
    Mutant(
        "gradient_table_float16_after_fill",
        "check_determinism",
        (
            edit(T, TABLE_MAG, "        self.mag = np.zeros(n, dtype=np.float16)  # 2 bytes an entry, not 8\n"),
            edit(
                T,
                TABLE_LOOKUP,
                "    def lookup(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:\n"
                "        missing = ~self.known[key]\n"
                "        mag_out = self.mag[key].astype(np.float64)\n"
                "        if missing.any():\n"
                "            new, where = np.unique(key[missing], return_inverse=True)\n"
                "            gr, gc = np.divmod(new, _GRAD_SIDE)\n"
                "            mag, b = _hog_magnitude_bin((gr - 255).astype(np.float64), (gc - 255).astype(np.float64))\n"
                "            self.mag[new] = mag  # kept in float16 once filled\n"
                "            self.bin[new] = b\n"
                "            self.known[new] = True\n"
                "            mag_out[missing] = mag[where]  # this call has the exact values it just computed\n"
                "        return mag_out, self.bin[key]\n",
            ),
        ),
        "an image with gradient pairs not met before in the process, tokenized twice (16 x 16 x 3 uint8 noise; nearly "
        "every non-flat image the strategy draws brings new pairs): the first call uses the exact float64 magnitudes "
        "it computes, the second their float16 copies from the table, so the HOG slots differ",
        held_out=True,
        round=11,
    ),
    Mutant(
        "batch_shared_palette",
        "check_batch_equals_singles",
        vmethod(
            "    def tokenize_batch(self, items: Any) -> Any:\n"
            "        from v22sdk import TokenBatch\n"
            "\n"
            "        from .colour import dominant_colours\n"
            "        from .pixels import prepare\n"
            "\n"
            "        batch = super().tokenize_batch(items)\n"
            "        if len(items) < 2:\n"
            "            return batch\n"
            "        # one palette for the whole batch, so that its images' dominant colours compare: k-means on all pixels\n"
            '        pixels = [prepare(i.data if isinstance(i, Sample) else i, "<vision batch>") for i in items]\n'
            "        pooled = np.concatenate([p.reshape(-1, 1, 3) for p in pixels])\n"
            "        attr = batch.attr.copy()\n"
            "        for key, value in dominant_colours(pooled).items():\n"
            '            attr[:, SCHEMA.index(f"vis.color.{key}")] = value\n'
            "        return TokenBatch(emb=batch.emb, attr=attr, modality=self.name, offsets=dict(batch.offsets), "
            "source=None)\n"
        ),
        "a batch of two images or more with different colours (8 x 8 x 3 uint8 noise, then 4 x 4 uint8 black): every "
        "token's dominant-colour slots come from k-means on the batch's pooled pixels, not on its own image's",
        held_out=True,
        round=11,
    ),
    Mutant(
        "str_input_type_error",
        "check_invalid_inputs",
        (
            edit(
                P,
                NOT_ARRAY,
                "    if isinstance(data, str):  # a file name: a programming error, not bad pixels\n"
                '        raise TypeError(f"expected an image array, got the str {data!r}: use tokenize_file for a path")\n'
                + NOT_ARRAY,
            ),
        ),
        "every valid input: the plugin's own 'wrong_dtype' case, the str 'image.png', raises TypeError, not an "
        "InputError",
        held_out=True,
        round=11,
    ),
    # -- rare inputs, round 11 --
    Mutant(
        "big_detail_features_in_audio_zone",
        "check_declared_slots",
        (
            edit(
                M,
                RETURN_ENC,
                "        from .pixels import MAX_SIDE\n"
                "\n"
                "        if max(height, width) > MAX_SIDE:\n"
                "            # a big image: the fine detail the downscale removes, at full resolution, and the downscale\n"
                "            plane = (array if array.ndim == 2 else array[:, :, 0]).astype(np.float32)\n"
                '            full_scale = float(np.iinfo(array.dtype).max) if array.dtype.kind == "u" else 1.0\n'
                "            detail = float(np.abs(np.diff(plane, axis=1)).mean()) / full_scale if width > 1 else 0.0\n"
                "            attr[:, 256] = min(1.0, detail)\n"
                "            attr[:, 257] = min(1.0, max(height, width) / (8.0 * MAX_SIDE))\n" + RETURN_ENC,
            ),
        ),
        "an image with a side over 1024 pixels (1100 x 1100 uint8 noise, or a flat one; the strategy draws at most "
        "128): two values land in attr 256 and 257, the audio zone, which the vision schema does not declare",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "big_attr_zone_only",
        "check_shape_dtype",
        (
            edit(
                M,
                RETURN_ENC,
                "        from .pixels import MAX_SIDE\n"
                "\n"
                "        if max(height, width) > MAX_SIDE:  # big images: keep the vision zone only (the rest is zeros)\n"
                "            attr = np.ascontiguousarray(attr[:, idx])\n" + RETURN_ENC,
            ),
        ),
        "an image with a side over 1024 pixels (1100 x 900 uint8 noise; the strategy draws at most 128): attr has "
        "shape (N, 128), the vision zone alone, not (N, 384)",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "white_balance_from_first_photo",
        "check_fresh_instance",
        (
            edit(
                M,
                MAX_GRID_LINE,
                MAX_GRID_LINE
                + "#: Each instance's white-balance gains, from its first photo (one camera per instance).\n"
                "_WHITE: dict[int, np.ndarray] = {}\n",
            ),
            edit(
                M,
                PREPARE,
                PREPARE
                + "        if max(height, width) > 512:  # a photo: white-balance it by this camera's grey world\n"
                "            means = rgb.reshape(-1, 3).mean(axis=0)\n"
                "            gains = _WHITE.setdefault(id(self), (means.mean() / np.maximum(means, 1e-6)).astype(np.float32))\n"
                "            rgb = np.clip(rgb * gains, 0.0, 1.0)\n",
            ),
        ),
        "an instance that has tokenized an image over 512 pixels a side, then another with other channel means (600 x "
        "600 x 3 uint8 noise, then a 600 x 600 reddish one; the strategy draws at most 128): the second gets the "
        "first's gains, where a fresh instance balances it by its own",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "decode_import_sets_black_background",
        "check_fresh_process",
        (
            edit(D, "from . import headers\n", "from . import headers, pixels\n"),
            edit(
                D,
                "FEATURE_BYTES = 64 << 20\n",
                "FEATURE_BYTES = 64 << 20\n"
                "#: Decoded files show transparent pixels over black, as decoders and viewers composite them.\n"
                "pixels.ALPHA_BACKGROUND = 0.0\n",
            ),
        ),
        "an image with alpha that is not fully opaque, tokenized in a process that has loaded an image file (8 x 8 x 4 "
        "uint8 noise after a load of any PNG; the strategy's samples are arrays, never files): the first load imports "
        "decode, which sets the module-wide background to black, so the array is composited over black where a "
        "process that never loaded a file composites it over white",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "none_as_blank_frame",
        "check_input_spec",
        (
            edit(
                P,
                NOT_ARRAY,
                "    if data is None:  # no frame (a dropped video frame): a blank one\n"
                "        data = np.zeros((1, 1), dtype=np.uint8)\n" + NOT_ARRAY,
            ),
        ),
        "None as the input (the strategy draws arrays only): tokenized as a 1 x 1 black image, not refused with "
        "InputError",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "read_only_subsampled",
        "check_edge_inputs",
        (
            edit(
                P,
                PREPARED,
                PREPARED + "    if not array.flags.writeable and min(h, w) >= 2:  # read-only (a memory map, decoded "
                "data): every second pixel is enough\n"
                "        array = array[::2, ::2]\n"
                "        h, w = array.shape[:2]\n",
            ),
        ),
        "a read-only image at least 2 pixels a side (8 x 8 x 3 uint8 noise with setflags(write=False); the strategy "
        "draws writeable arrays): every second pixel is used, so its tokens differ from the same values writeable",
        rare=True,
        held_out=True,
        round=11,
    ),
    Mutant(
        "file_handles_kept_open",
        "check_files",
        (
            edit(
                D,
                FORMATS_LINE,
                FORMATS_LINE + "#: Open handles of the files read so far, by path: a gallery reads its files again and "
                "again.\n"
                "_HANDLES: dict = {}\n",
            ),
            edit(
                D,
                READ_OPEN,
                "        fh = _HANDLES.get(source)\n"
                "        if fh is None:  # keep the file open: the next read of it skips the open\n"
                '            fh = _HANDLES[source] = open(path, "rb")\n'
                "        fh.seek(0)\n"
                "        size = os.fstat(fh.fileno()).st_size\n"
                '        check_budget(source, size + FEATURE_BYTES, f"a file of {human(size)}")\n'
                "        buf = fh.read()\n",
            ),
        ),
        "a file loaded, then deleted (or replaced by a new file at its path) and loaded again (an 8 x 8 uint8 noise "
        "PNG; the strategy's samples are arrays, never files): the kept handle still reads the old file, so load gives "
        "its pixels instead of an InputError (or the new content)",
        rare=True,
        held_out=True,
        round=11,
    ),
    # -- controls, round 11 --
    Mutant(
        "ctl_final_clip_by_min_max",
        None,
        (edit(F, FINAL_CLIP, "    return np.minimum(np.maximum(values, -1.0), 1.0)\n"),),
        "a refactor: the final clip by np.maximum then np.minimum (the same values, NaN and -0.0 included: the same "
        "bits)",
        held_out=True,
        round=11,
    ),
    Mutant(
        "ctl_sat_min_0_10",
        None,
        (edit(C, "SAT_MIN = 0.12\n", "SAT_MIN = 0.10\n"),),
        "a design change: pixels count as coloured above saturation 0.10 instead of 0.12 (other hue, warm/cool and "
        "saturated-share values, every rule kept)",
        held_out=True,
        round=11,
    ),
)

SP = "space.py"
COLOURFULNESS = '    out["colorfulness"] = float(np.tanh((sigma + 0.3 * mu) / 100.0))\n'
FOCUS = '    out: dict[str, float] = {"focus": clip(np.log10(1.0 + float(lap.var())) / 4.0)}\n'
CELLS_RETURN = '        return Encoding(emb=emb, attr=attr, offsets={"box": boxes})\n'
SAMPLE_INPUTS = "    @classmethod\n    def sample_inputs(cls) -> Any:\n"
GRID_FIELD = "    grid: int = attrs.field(default=0, validator=_check_grid)\n"
SLOTS_IMPORT = "from .slots import SCHEMA\n\nMAX_GRID = 8\n"
SHAPE_SIDE_LINE = "SHAPE_SIDE = 256\n"
HOLES = '    out["holes"] = log_count(holes)\n'
BIT_QUADS = "    q = p[:-1, :-1] + 2 * p[:-1, 1:]\n    q += 4 * p[1:, :-1]\n    q += 8 * p[1:, 1:]\n"
HELD_OUT_12: tuple[Mutant, ...] = (
    Mutant(
        "colorfulness_relative_to_contrast",
        "check_finite",
        (
            edit(
                C,
                COLOURFULNESS,
                "    # colourfulness relative to the luma contrast: the same scene, lit harder or softer, scores the same\n"
                "    contrast = float((0.299 * r + 0.587 * g + 0.114 * b).std())\n"
                '    with np.errstate(divide="ignore", invalid="ignore"):\n'
                '        out["colorfulness"] = float(np.tanh(np.float64(sigma + 0.3 * mu) / np.float64(2.0 * contrast)))\n',
            ),
        ),
        "a flat grey image (8 x 8 uint8 of level 128; every constant grey, grey + alpha or bool image the strategy "
        "draws, and every 1 x 1 grey image): no colour and no contrast, 0 / 0, so the colorfulness slot is "
        "tanh(NaN) = NaN, which the final clip keeps",
        held_out=True,
        round=12,
    ),
    Mutant(
        "emb_rounded_to_three_decimals",
        "check_unit_norm_emb",
        (
            edit(
                E,
                L2_TAIL,
                "        v = v / norm\n"
                "    # three decimals: the same embedding whatever BLAS kernel computed the projection (token-contract.md)\n"
                "    return np.round(v, 3).astype(np.float32)\n",
            ),
        ),
        "nearly every image (a 32 x 32 x 3 uint8 noise image: 1.7e-4; an 8 x 8 uint8 image of level 128: 1.2e-4; a "
        "disc with grid 2: up to 6e-4): each component is rounded to a multiple of 0.001 after the normalisation, so "
        "the norm is off by more than 1e-4 for most tokens",
        held_out=True,
        round=12,
    ),
    Mutant(
        "focus_unclipped",
        "check_attr_bounds",
        (
            edit(
                SP,
                FOCUS,
                '    out: dict[str, float] = {"focus": float(np.log10(1.0 + float(lap.var())) / 4.0)}  # an 8-bit '
                "Laplacian's variance stays below 1e4\n",
            ),
            edit(
                F,
                FINAL_CLIP,
                "    return values  # each feature clips itself (scaling.clip): a second clip would hide a scaling bug\n",
            ),
        ),
        "a sharp, detailed image (a 32 x 32 uint8 noise image: Laplacian variance about 5e4, log10(1 + v) / 4 = 1.17; "
        "every noise image the strategy draws): the focus slot is above 1, and the final clip is gone",
        held_out=True,
        round=12,
    ),
    Mutant(
        "cell_offsets_skip_global",
        "check_offsets",
        (
            edit(
                M,
                CELLS_RETURN,
                "        # each patch's (row, column) in the grid, for the patch tokens\n"
                "        cells = np.array([(r, c) for r in range(self.grid) for c in range(self.grid)], "
                "dtype=np.int64).reshape(-1, 2)\n"
                '        return Encoding(emb=emb, attr=attr, offsets={"box": boxes, "cell": cells})\n',
            ),
        ),
        "every image (8 x 8 uint8 noise): the new offsets['cell'] has a row per patch token but none for the global "
        "token, so it has N - 1 rows (0 for the default configuration, 4 of 5 with grid 2), not one per token",
        held_out=True,
        round=12,
    ),
    Mutant(
        "batch_items_numbered_from_one",
        "check_batch_equals_singles",
        (
            edit(
                M,
                SAMPLE_INPUTS,
                "    def tokenize_batch(self, items: Any) -> Any:\n"
                "        from v22sdk import TokenBatch\n"
                "\n"
                '        # inputs numbered from 1, as the CLI lists them ("image 1 of 3")\n'
                "        batch = super().tokenize_batch(items)\n"
                '        item = batch.offsets["item"] + 1\n'
                "        return TokenBatch(\n"
                '            emb=batch.emb, attr=batch.attr, modality=self.name, offsets={**batch.offsets, "item": item}, '
                "source=None\n"
                "        )\n"
                "\n" + SAMPLE_INPUTS,
            ),
        ),
        "every batch (one 8 x 8 uint8 noise image, or two): offsets['item'] is 1 for the first input's tokens, 2 for "
        "the second's, not 0 and 1",
        held_out=True,
        round=12,
    ),
    Mutant(
        "attr_row_padded_by_np_resize",
        "check_declared_slots",
        (
            edit(
                M,
                ATTR_LINE,
                "            attr[i] = np.resize(attributes(crop).astype(np.float32), ATTR_DIM)  # the 128 values, "
                "padded to the row\n",
            ),
        ),
        "every image (8 x 8 uint8 noise): np.resize repeats the 128 values to fill 384 instead of padding with zeros, "
        "so the vision zone (128..255) holds the right values but the language and audio zones (0..127, 256..383), "
        "which the schema does not declare, hold them too",
        held_out=True,
        round=12,
    ),
    Mutant(
        "feature_groups_frozenset",
        "check_config_roundtrip",
        (
            edit(
                M,
                GRID_FIELD,
                GRID_FIELD
                + "    #: The feature groups to compute (all four by default); the slots of the others stay 0.\n"
                '    groups: frozenset = attrs.field(default=frozenset({"color", "geometry", "texture", "space"}))\n',
            ),
            edit(M, SLOTS_IMPORT, "from .slots import KEYS, SCHEMA\n\nMAX_GRID = 8\n"),
            edit(
                M,
                ATTR_LINE,
                ATTR_LINE + "            if len(self.groups) < 4:  # the slots of the groups not computed stay 0\n"
                "                attr[i, idx[[group not in self.groups for group, _name in KEYS]]] = 0.0\n",
            ),
        ),
        "every configuration: config() (attrs.asdict) holds the groups as a frozenset, which json.dumps cannot write "
        "(TypeError)",
        held_out=True,
        round=12,
    ),
    # -- rare inputs, round 12 --
    Mutant(
        "big_focus_sampled_unseeded",
        "check_determinism",
        (
            edit(
                SP,
                FOCUS,
                "    seen = lap\n"
                "    if lap.size > 1 << 18:  # a large working image: the variance of 65536 sampled pixels is plenty\n"
                "        seen = lap.ravel()[np.random.default_rng().integers(0, lap.size, 1 << 16)]\n"
                '    out: dict[str, float] = {"focus": clip(np.log10(1.0 + float(seen.var())) / 4.0)}\n',
            ),
        ),
        "an image whose working copy has more than 2**18 pixels and whose focus is below saturation (a 600 x 600 uint8 "
        "disc or gradient; the strategy draws at most 128 x 128): the Laplacian variance is estimated on pixels drawn "
        "by an unseeded generator, so two calls give other focus values",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "mask_reused_for_still_frames",
        "check_fresh_process",
        (
            edit(
                F,
                SHAPE_SIDE_LINE,
                SHAPE_SIDE_LINE + "#: The last frame's shape copy and mask, per shape: frames of a still scene share a "
                "mask (video).\n"
                "_LAST_FRAME: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}\n",
            ),
            edit(
                F,
                SHAPE_GROUP,
                "    small = shrink(grey, SHAPE_SIDE)\n"
                "    last = _LAST_FRAME.get(small.shape)\n"
                "    if last is not None and float(np.abs(small.astype(np.int16) - last[0]).mean()) < 0.5:\n"
                "        mask = last[1]  # a still frame: the previous frame's mask, no new Otsu split\n"
                "    else:\n"
                "        mask = foreground_mask(small)\n"
                "    _LAST_FRAME[small.shape] = (small.astype(np.int16), mask)\n"
                "    geometry, main = geometry_features(mask)\n",
            ),
        ),
        "two images of one shape that differ in a few pixels (a 32 x 32 uint8 disc, then the same disc with pixel (0, "
        "0) set to 255: mean grey difference below 0.5; the strategy's images differ far more): the second reuses "
        "the first's foreground mask, so its geometry depends on which of the two a process tokenized first",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "save_keeps_existing_file",
        "check_files",
        (
            edit(
                S,
                PNG_WRITE,
                "    if os.path.exists(path):  # never clobber a file that is already there (the user's own image)\n"
                "        return\n" + PNG_WRITE,
            ),
        ),
        "a path written again (save of one 8 x 8 uint8 noise image, then of another, to one path; the strategy's "
        "samples are arrays, never files): the second save returns without writing, so load reads the first image",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "batch_chunks_drop_remainder",
        "check_edge_inputs",
        (
            edit(
                M,
                SAMPLE_INPUTS,
                "    def tokenize_batch(self, items: Any) -> Any:\n"
                "        from v22sdk import TokenBatch\n"
                "\n"
                "        # long batches in chunks of four (OpenCV's buffers stay warm); a short batch is one chunk\n"
                "        if len(items) <= 4:\n"
                "            return super().tokenize_batch(items)\n"
                "        parts = []\n"
                "        for k in range(0, len(items) - 3, 4):\n"
                "            parts.append(super().tokenize_batch(items[k : k + 4]))\n"
                "        joined = TokenBatch.concat(parts)\n"
                '        item = np.concatenate([p.offsets["item"] + 4 * j for j, p in enumerate(parts)])\n'
                "        return TokenBatch(\n"
                '            emb=joined.emb, attr=joined.attr, modality=self.name, offsets={**joined.offsets, "item": '
                "item}, source=None\n"
                "        )\n"
                "\n" + SAMPLE_INPUTS,
            ),
        ),
        "a batch of five inputs or more that is not a whole number of chunks of four (six 8 x 8 uint8 noise images; "
        "the batch check draws 1 to 3): the last partial chunk is never tokenized, so inputs 4 and 5 have no tokens",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "holes_unclipped",
        "check_attr_bounds",
        (
            edit(
                G,
                HOLES,
                '    out["holes"] = float(np.log2(1.0 + holes) / 10.0)  # at most 1023 holes fit a shape copy\n',
            ),
            edit(
                F,
                FINAL_CLIP,
                "    bad = np.abs(values) > 1.0 + 1e-6  # an overflow beyond rounding is a bug to see, not to hide\n"
                "    return np.where(bad, values, np.clip(values, -1.0, 1.0))\n",
            ),
        ),
        "a noise image over about 128 pixels a side (200 x 200 uint8 grey noise: more than 2000 holes in its shape "
        "copy, log2(1 + holes) / 10 about 1.13; the strategy draws at most 128 x 128, whose masks hold about 1000, "
        "only rarely more than 1023): the holes slot is above 1",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "unknown_units_dropped",
        "check_input_spec",
        vmethod(
            "    def check_units(self, units: Any, source: str) -> dict[str, float]:\n"
            "        # images carry no units: what a caller passes along (dpi, exposure) is metadata, not an error\n"
            "        return {}\n"
        ),
        "a unit the input spec does not declare (tokenize(an 8 x 8 uint8 image, dpi=300.0); the strategy's samples "
        "carry none): dropped and tokenized, not refused with InputError",
        rare=True,
        held_out=True,
        round=12,
    ),
    Mutant(
        "big_downscaled_into_callers_buffer",
        "check_determinism",
        (
            edit(
                P,
                BIG_RESIZE,
                BIG_RESIZE.replace(
                    "        array = bound_size(np.ascontiguousarray(array))\n",
                    "        small = bound_size(np.ascontiguousarray(array))\n"
                    "        if array.flags.c_contiguous and array.flags.writeable and small.dtype == array.dtype:\n"
                    "            # no second buffer: the working pixels go into the front of the input's own memory\n"
                    "            front = array.reshape(-1)[: small.size].reshape(small.shape)\n"
                    "            front[...] = small\n"
                    "            small = front\n"
                    "        array = small\n",
                ),
            ),
        ),
        "a writeable C-ordered image over 1024 pixels a side (1100 x 1100 uint8 noise, or uint16, float32, float64; "
        "the strategy draws at most 128): the downscaled copy is written into the front of the caller's own array, "
        "so its first rows change and a second call gives other tokens (a read-only array is spared)",
        rare=True,
        held_out=True,
        round=12,
    ),
    # -- controls, round 12 --
    Mutant(
        "ctl_bit_quads_one_expression",
        None,
        (
            edit(
                G,
                BIT_QUADS,
                "    q = p[:-1, :-1] + 2 * p[:-1, 1:] + 4 * p[1:, :-1] + 8 * p[1:, 1:]  # the 2 x 2 code in one "
                "expression\n",
            ),
        ),
        "a refactor: the bit-quad codes in one uint8 expression (values 0..15: the same codes, the same bits)",
        held_out=True,
        round=12,
    ),
    Mutant(
        "ctl_kmeans_side_24",
        None,
        (edit(C, "KMEANS_SIDE = 32\n", "KMEANS_SIDE = 24\n"),),
        "a design change: the dominant colours by k-means on a copy of at most 24 pixels a side instead of 32 (other "
        "dominant colours and shares for images over 24 pixels, still seeded: every rule kept)",
        held_out=True,
        round=12,
    ),
)

MUTANTS = (
    MUTANTS
    + HELD_OUT
    + POST_HOC
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
