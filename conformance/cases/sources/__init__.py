"""Case sources built from other projects' test suites (ONNX's node tests), each a suite of its own."""
