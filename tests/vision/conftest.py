"""Vision tests: report the OpenCV build under test (the plugin is checked on 4.x and 5.x)."""


def pytest_report_header(config):
    import cv2

    return f"vision: OpenCV {cv2.__version__} from {cv2.__file__}"
