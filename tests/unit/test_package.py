import wirebroker


def test_version_is_a_release_string():
    major, minor, patch = wirebroker.__version__.split(".")
    assert all(part.isdigit() for part in (major, minor, patch))
