"""Where Bedrock Converse endpoints accept what the published definition refuses (the kinds and how the
spec layer reads them: rules/tolerance.py)."""

from ...rules.tolerance import Tolerance

TOLERANCES = (
    Tolerance("media-type", None, "format",
              "pydantic/pydantic-ai:tests/models/cassettes/test_bedrock/test_video_url_input.yaml (a Converse video "
              "block with format \"video/mp4\", answered 200; botocore's VideoFormat lists mp4)"),
)
