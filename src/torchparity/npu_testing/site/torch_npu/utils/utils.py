"""``torch_npu.utils.utils``: the log helpers Ascend's tests patch (a line on stdout each)."""


def _print_info_log(info_msg):
    print(f"[INFO] {info_msg}")


def _print_warn_log(warn_msg):
    print(f"[WARNING] {warn_msg}")


def _print_error_log(error_msg):
    print(f"[ERROR] {error_msg}")
