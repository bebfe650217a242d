"""The 128 named slots of the vision zone (attr 128..255): name, meaning and scaling of each.

Groups, in slot order: ``vis.color.*`` (45), ``vis.geometry.*`` (25), ``vis.texture.*`` (43),
``vis.space.*`` (15). Every scaling is a monotone (non-decreasing) map of the raw feature into
[-1, 1]; "clipped" means values beyond the stated range saturate at ±1. Fractions and shares are
already in [0, 1] and are stored as they are.
"""

from __future__ import annotations

from v22sdk import AttributeSchema

FRACTION = "fraction in [0, 1], as is"
_ANGLE_NAMES = {
    "0": "0° (horizontal neighbour)",
    "45": "45° (up-right neighbour)",
    "90": "90° (vertical neighbour)",
    "135": "135° (up-left neighbour)",
}

COLOR = [
    (
        "hue_mean",
        "saturation-weighted circular mean hue of the coloured pixels (saturation > 0.12; red 0°, green 120°, blue 240° = −120°)",
        "angle in degrees / 180, in (−1, 1]; 0 when no pixel is coloured",
    ),
    (
        "hue_concentration",
        "resultant length of the coloured pixels' saturation-weighted hue angles (1 = one hue)",
        "as is, [0, 1]",
    ),
    ("sat_mean", "mean HSV saturation", FRACTION),
    ("sat_std", "standard deviation of HSV saturation", "2·std, clipped"),
    ("val_mean", "mean HSV value (max of R, G, B)", FRACTION),
    ("val_std", "standard deviation of HSV value", "2·std, clipped"),
    ("lab_l_mean", "mean CIE L* lightness", "L*/100"),
    ("lab_a_mean", "mean CIE a* (green − to red +)", "a*/128, clipped"),
    ("lab_b_mean", "mean CIE b* (blue − to yellow +)", "b*/128, clipped"),
    ("lab_l_std", "standard deviation of L*", "std/50, clipped"),
    ("lab_a_std", "standard deviation of a*", "std/64, clipped"),
    ("lab_b_std", "standard deviation of b*", "std/64, clipped"),
    ("colorfulness", "Hasler-Süsstrunk colourfulness M = σ_rgyb + 0.3·μ_rgyb (0..255 scale)", "tanh(M/100)"),
    ("opponent_std", "spread σ_rgyb of the opponent channels rg = R−G, yb = (R+G)/2 − B", "tanh(σ/100)"),
    ("opponent_mean", "mean offset μ_rgyb of the opponent channels (overall colour cast)", "tanh(μ/100)"),
    (
        "hue_entropy",
        "entropy of the 18-bin hue histogram of coloured pixels (S > 0.12)",
        "entropy / log2(18), [0, 1]; 0 when no pixel is coloured",
    ),
    ("hue_peak_share", "share of coloured pixels in the fullest of 18 hue bins", FRACTION),
    ("luma_mean", "mean luma Y = 0.299R + 0.587G + 0.114B", FRACTION),
    ("luma_std", "standard deviation of luma (global contrast)", "2·std, clipped"),
    ("luma_range", "luma range between the 1st and 99th percentiles", FRACTION),
    ("luma_median", "median luma", FRACTION),
    ("bright_fraction", "share of pixels with luma > 250/255 (blown highlights)", FRACTION),
    ("dark_fraction", "share of pixels with luma < 5/255 (crushed shadows)", FRACTION),
    (
        "coarse_contrast",
        "standard deviation of the 4×4 area-averaged luma (large-scale layout contrast)",
        "2·std, clipped",
    ),
    ("red_blue_balance", "mean R − mean B (warm cast +, cool cast −)", "difference of [0, 1] means, in [−1, 1]"),
    ("green_balance", "mean G − (mean R + mean B)/2 (green +, magenta −)", "difference of [0, 1] means, clipped"),
    ("saturated_fraction", "share of coloured pixels (HSV saturation > 0.12)", FRACTION),
    ("warm_fraction", "share of pixels that are coloured with hue < 60° or > 300°", FRACTION),
    ("cool_fraction", "share of pixels that are coloured with 120° ≤ hue ≤ 300°", FRACTION),
]
for _k in range(1, 5):
    _which = {1: "largest", 2: "second", 3: "third", 4: "smallest"}[_k]
    COLOR += [
        (f"dom{_k}_l", f"L* of the {_which} of 4 dominant colours (seeded k-means in Lab)", "L*/100; 0 if empty"),
        (f"dom{_k}_a", f"a* of the {_which} dominant colour", "a*/128, clipped; 0 if empty"),
        (f"dom{_k}_b", f"b* of the {_which} dominant colour", "b*/128, clipped; 0 if empty"),
        (f"dom{_k}_share", f"pixel share of the {_which} dominant colour", FRACTION),
    ]

GEOMETRY = [
    ("fg_fraction", "share of pixels in the Otsu foreground (the class not dominating the border)", FRACTION),
    ("components", "number n of 8-connected foreground components", "log2(1+n)/10, clipped (1 → 0.1, 1023 → 1)"),
    ("largest_component_share", "area of the largest foreground component / image area", FRACTION),
    ("holes", "number n of background regions enclosed by foreground", "log2(1+n)/10, clipped"),
    ("euler_number", "Euler number e = components − holes", "sign(e)·log2(1+|e|)/10, clipped"),
    ("bbox_x0", "left edge of the main object's bounding box / image width", "fraction; 0 without object"),
    ("bbox_y0", "top edge of the main object's bounding box / image height", "fraction; 0 without object"),
    ("bbox_width", "bounding-box width / image width", "fraction; 0 without object"),
    ("bbox_height", "bounding-box height / image height", "fraction; 0 without object"),
    ("aspect_ratio", "bounding-box width / height of the main object", "log2(w/h)/4, clipped (2:1 → 0.25)"),
    ("solidity", "contour area / convex-hull area", "[0, 1]; 0 without object"),
    ("circularity", "4π·area / perimeter² (perimeter of the 1-px-simplified contour; disc ≈ 1)", "clipped to [0, 1]"),
    ("elongation", "long / short side of the minimum-area rectangle, e", "1 − 1/e (square 0, 2:1 → 0.5, line → 1)"),
    ("extent", "contour area / bounding-box area (both through pixel centres)", "clipped to [0, 1]"),
    ("convexity", "convex-hull perimeter / contour perimeter", "[0, 1]"),
    ("is_convex", "the approxPolyDP(2 % of perimeter) polygon is convex", "1 or 0"),
    ("polygon_vertices", "vertex count n of the approxPolyDP(2 % of perimeter) polygon", "n/32, clipped"),
    ("object_angle", "major-axis angle of the main object, counter-clockwise on screen", "degrees / 90, in (−1, 1]"),
]
GEOMETRY += [
    (
        f"hu_{i}",
        f"Hu moment φ{i} of the main contour (φ7 changes sign under mirroring)",
        "sign(φ)·(30 + log10|φ|)/32, |φ| clipped to [1e-30, 100]",
    )
    for i in range(1, 8)
]

TEXTURE = []
for _prop, _what, _scaling in (
    ("contrast", "GLCM contrast Σ P(i,j)(i−j)² (8 grey levels, distance 1)", "sqrt(contrast/49), [0, 1]"),
    ("energy", "GLCM energy sqrt(Σ P²) (uniformity)", "as is, [0, 1]"),
    ("homogeneity", "GLCM homogeneity Σ P/(1 + (i−j)²)", "as is, [0, 1]"),
    ("correlation", "GLCM correlation of neighbouring grey levels (1 for a flat image)", "as is, [−1, 1]"),
):
    for _a, _desc in _ANGLE_NAMES.items():
        TEXTURE.append((f"glcm_{_prop}_{_a}", f"{_what}, offset {_desc}", _scaling))
_LBP = {
    0: "dark spot",
    1: "1 of 8 brighter",
    2: "2 of 8 brighter",
    3: "3 of 8 brighter (corner)",
    4: "4 of 8 brighter (edge)",
    5: "5 of 8 brighter",
    6: "6 of 8 brighter",
    7: "7 of 8 brighter",
    8: "flat or bright spot",
    9: "non-uniform (noise, fine texture)",
}
TEXTURE += [(f"lbp_{k}", f"share of uniform-LBP code {k} (P=8, R=1): {d}", FRACTION) for k, d in _LBP.items()]
TEXTURE += [
    (
        f"hog_{a:03d}",
        f"mean L2-Hys-normalised HOG value of orientation bin [{a}°, {a + 20}°) (8×8 cells, 2×2 blocks)",
        "2·mean, clipped ([0, 0.5] → [0, 1])",
    )
    for a in range(0, 180, 20)
]
TEXTURE += [
    (
        "laplacian_var",
        "variance v of the 4-neighbour Laplacian at texture scale (fine detail)",
        "log10(1+v)/4, clipped",
    ),
    (
        "spectral_dispersion",
        "std/mean of the non-DC amplitude spectrum (peaky, periodic spectra are high)",
        "tanh(x/2)",
    ),
    ("spectral_slope", "slope of log radial power vs log frequency (natural images ≈ −2)", "slope/4, clipped"),
    ("high_freq_ratio", "share of non-DC power above half the Nyquist frequency", FRACTION),
    ("directionality", "mean |∂x| / mean |∂y| (Sobel): > 1 for vertical structures", "log2(ratio)/4, clipped"),
    ("edge_density", "share of Canny(50, 150) edge pixels", FRACTION),
    ("gradient_mean", "mean Sobel gradient magnitude", "magnitude / (4·255), clipped"),
    ("specular_fraction", "share of texture pixels brighter than 240/255", FRACTION),
]

SPACE = [
    ("focus", "variance v of the Laplacian at working resolution (sharpness; blur lowers it)", "log10(1+v)/4, clipped"),
    (
        "focus_center_ratio",
        "Laplacian energy in the central third / in the whole image (subject sharper +)",
        "log2(ratio)/4, clipped; 0 for a flat image",
    ),
    ("centroid_x", "x of the main object's centroid / (width − 1)", "fraction; 0 without object"),
    ("centroid_y", "y of the main object's centroid / (height − 1)", "fraction; 0 without object"),
    ("sal_peak_x", "x of the spectral-residual saliency maximum / width", FRACTION),
    ("sal_peak_y", "y of the saliency maximum / height", FRACTION),
    ("sal_centroid_x", "saliency-weighted mean x / width", FRACTION),
    ("sal_centroid_y", "saliency-weighted mean y / height", FRACTION),
    (
        "sal_spread",
        "saliency-weighted spatial spread sqrt(var x + var y) in image fractions",
        "spread / sqrt(0.5), [0, 1]",
    ),
    ("sal_concentration", "share of saliency in the top 10 % most salient pixels (uniform map: 0.1)", FRACTION),
    ("sal_entropy", "entropy of the saliency distribution", "entropy / log(4096), [0, 1]"),
    ("sal_object_overlap", "share of saliency falling on the Otsu foreground", FRACTION),
    ("symmetry_lr", "left-right mirror symmetry of luma, 1 − 2·mean|Y − mirror(Y)|", "as is, clipped"),
    ("symmetry_tb", "top-bottom mirror symmetry of luma, 1 − 2·mean|Y − flip(Y)|", "as is, clipped"),
    ("luma_top_bottom", "mean luma of the top half − bottom half (sky above +)", "difference, [−1, 1]"),
]

GROUPS = (("color", COLOR), ("geometry", GEOMETRY), ("texture", TEXTURE), ("space", SPACE))
SPECS = [(f"vis.{group}.{name}", meaning, scaling) for group, items in GROUPS for name, meaning, scaling in items]
SCHEMA = AttributeSchema.build("vision", SPECS)
#: Slot keys as the feature functions return them, in schema order: (group, short name).
KEYS = tuple((group, name) for group, items in GROUPS for name, _m, _s in items)
assert len(SCHEMA) == 128, len(SCHEMA)
