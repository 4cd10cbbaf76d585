"""``torch_npu.utils._path_manager.PathManager``: the two folder helpers Ascend's tests call
(make a folder owner-only, remove a file or folder if present)."""

import os
import shutil


class PathManager:
    @classmethod
    def make_dir_safety(cls, path):
        os.makedirs(path, mode=0o750, exist_ok=True)

    @classmethod
    def remove_path_safety(cls, path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
