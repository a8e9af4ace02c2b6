"""A pyarrow filesystem handler that hands every call to the local filesystem: tests
subclass it to change one call (list a file that is gone, record what is opened) and wrap
it in ``pyarrow.fs.PyFileSystem``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs


class LocalHandler(pafs.FileSystemHandler):
    """The local filesystem, call for call; a subclass overrides what its test changes."""

    def __init__(self) -> None:
        self._fs = pafs.LocalFileSystem()

    def get_type_name(self) -> str:
        return type(self).__name__.lower()

    def equals(self, other: object) -> bool:
        return other is self

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._fs.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._fs.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self._fs.open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self._fs.open_input_stream(path)

    def create_dir(self, path: str, recursive: bool) -> None:
        self._fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._fs.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("not here")

    def delete_file(self, path: str) -> None:
        self._fs.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._fs.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._fs.copy_file(src, dest)

    def open_output_stream(self, path: str, metadata: object = None) -> pa.NativeFile:
        return self._fs.open_output_stream(path)

    def open_append_stream(self, path: str, metadata: object = None) -> pa.NativeFile:
        return self._fs.open_append_stream(path)


class OpenedHandler(LocalHandler):
    """The local filesystem, noting in ``opened`` each file opened for reading (a footer
    or a read)."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def open_input_file(self, path: str) -> pa.NativeFile:
        self.opened.append(path)
        return super().open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        self.opened.append(path)
        return super().open_input_stream(path)
