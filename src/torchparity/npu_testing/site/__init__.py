"""The folder put on ``sys.path`` by ``torchparity.npu_testing.environ()``: it holds the
``torch_npu`` stand-in. Not imported as part of torchparity."""
