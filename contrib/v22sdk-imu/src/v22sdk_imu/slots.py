"""The named attribute slots of the IMU modality (audio zone, attr 256..274)."""

from __future__ import annotations

from v22sdk import AttributeSchema

G = 9.80665  # standard gravity, m/s²

SCHEMA = AttributeSchema.build("audio", [
    ("imu.acc.mean", "mean accelerometer magnitude |a| over the window", "mean|a| / (4 g), clipped to [0, 1]; 0.25 at rest"),
    ("imu.acc.std", "standard deviation of |a| (how much the device shakes)", "x / (1 + x), x = std|a| / g"),
    ("imu.acc.peak", "largest deviation of |a| from g", "x / (1 + x), x = max| |a| - g | / g"),
    ("imu.acc.jerk", "mean rate of change of |a|", "tanh(x / (10 g/s)), x = mean|d|a|/dt| in m/s³"),
    ("imu.gyro.mean", "mean angular speed |ω|", "tanh(mean|ω| / π rad/s)"),
    ("imu.freq.dominant", "frequency of the strongest oscillation of |a|", "f / 20 Hz, clipped to [0, 1]; 0 when |a| is still"),
    ("imu.freq.periodicity", "share of |a|'s AC power in the dominant peak (±1 bin)", "fraction in [0, 1]"),
    ("imu.step.cadence", "step cadence from the autocorrelation of |a| (0.8–3.5 steps/s)",
     "steps per minute / 240, clipped to [0, 1]; 0 when no periodic stepping"),
    ("imu.orient.change", "total orientation change: |∫ω dt| over the window", "angle / π, clipped to [0, 1]"),
    ("imu.orient.yaw", "signed rotation about the device z axis: ∫ω_z dt (> 0 counter-clockwise)",
     "angle / π, clipped to [-1, 1]"),
    ("imu.still", "fraction of 0.25 s blocks at rest (std|a| < 0.1 m/s² and mean|ω| < 0.1 rad/s)", "fraction in [0, 1]"),
    ("imu.gravity.x", "x component of the mean acceleration direction (device tilt)", "component of the unit vector, in [-1, 1]"),
    ("imu.gravity.y", "y component of the mean acceleration direction", "component of the unit vector, in [-1, 1]"),
    ("imu.gravity.z", "z component of the mean acceleration direction", "component of the unit vector, in [-1, 1]"),
    ("imu.band.drift", "share of accelerometer AC power below 0.5 Hz (posture changes)", "fraction in [0, 1]"),
    ("imu.band.gait", "share of accelerometer AC power in 0.5–3 Hz (walking, running)", "fraction in [0, 1]"),
    ("imu.band.fast", "share of accelerometer AC power in 3–8 Hz (fast limb motion)", "fraction in [0, 1]"),
    ("imu.band.vibration", "share of accelerometer AC power above 8 Hz (vibration, impacts)", "fraction in [0, 1]"),
    ("imu.coverage", "window length / nominal window length (< 1 only for a signal shorter than one window)",
     "fraction in (0, 1]"),
])
