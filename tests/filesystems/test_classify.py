"""Which filesystem holds the archive: the mount table read as it is, on real FUSE mounts."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from fuse_mounts import LOCKS_SHARED

from loom_jupyter.archive import filesystem
from loom_jupyter.archive.filesystem import (
    Filesystem,
    filesystem_of,
    parse_mountinfo,
    statfs_magic,
)

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from fuse_mounts import BindMounts

FUSE_SUPER_MAGIC = 0x65735546

# Real lines' shapes (proc(5)): optional fields before "-", escapes in paths.
MOUNTINFO = r"""27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 27 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=65536k
31 27 0:27 / /dev/shm rw,nosuid shared:7 - tmpfs shm rw,size=1024k
40 27 0:40 / /home rw,relatime shared:12 master:3 - nfs4 nas:/home rw,vers=4.2,local_lock=none
41 27 0:41 / /mnt/old rw - nfs 10.0.0.3:/old rw,vers=3,nolock
42 27 0:42 / /mnt/team\040share rw - cifs //files/team\134dept rw,nobrl,cache=none
43 27 0:43 / /mnt/wsl rw - 9p drvfs rw,trans=virtio
44 27 0:44 / /home/jovyan/work rw - virtiofs mount0 rw
45 27 0:45 / /cephfs rw - ceph 10.0.0.4:6789:/ rw,name=admin
46 27 0:46 / /lustre rw - lustre 10.0.0.5@tcp:/scratch rw,flock
47 27 0:47 / /gpfs rw - gpfs gpfs0 rw
48 27 0:48 / /beegfs rw - beegfs beegfs_nodev rw
49 27 0:49 / /afs rw - afs AFS rw
50 27 0:50 / /gluster rw - fuse.glusterfs server:/vol rw,user_id=0
51 27 0:51 / /dbfs rw - fuse /dev/fuse rw
52 27 0:52 / /tmp/tab\011and\012newline rw - smb3 //srv/x rw
53 27 0:53 / /data rw - xfs /dev/sdb rw
54 27 0:54 / /overlay rw - overlay overlay rw,lowerdir=/a
"""


def _on(path: str) -> Filesystem:
    mounts = parse_mountinfo(MOUNTINFO)
    return filesystem._longest_mount(mounts, path) or Filesystem("none", "")


def test_a_bindfs_mount_is_a_virtual_filesystem_with_its_point_unescaped(
    mounts: BindMounts,
) -> None:
    mount = mounts.mount("host a", *LOCKS_SHARED)  # a space: "\040" in the mount table
    found = filesystem_of(mount / ".loom" / "nb.ipynb.sqlite")  # not there yet: its folder's
    assert found.fs_type == "fuse.bindfs"
    assert found.mount_point == str(mount)
    assert found.source == str(mounts.backing)
    assert "allow_other" in found.options
    assert (found.kind, found.shared, found.known) == ("virtual", True, True)
    assert found.describe() == f"fuse.bindfs (mounted at {mount})"
    assert found.unsafe_lock_option is None


def test_the_local_temp_folder_and_the_backing_folder_are_local(
    mounts: BindMounts, tmp_path: Path
) -> None:
    mounts.mount("view")
    for path in (tmp_path, mounts.backing):
        found = filesystem_of(path)
        assert found.known
        assert not found.shared, found
        assert found.kind == "local"
        assert tmp_path.as_posix().startswith(found.mount_point)


def test_without_a_mount_table_statfs_still_tells_fuse_from_a_local_disk(
    mounts: BindMounts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mount = mounts.mount("view")
    assert statfs_magic(mount) == FUSE_SUPER_MAGIC
    monkeypatch.setattr(filesystem, "MOUNTINFO", tmp_path / "no-such-mountinfo")
    fuse = filesystem_of(mount)
    assert (fuse.fs_type, fuse.shared, fuse.mount_point) == ("fuse", True, "")
    assert not filesystem_of(tmp_path).shared


def test_every_network_and_virtual_kind_is_recognised() -> None:
    kinds = {
        "/home/me/nb": ("nfs4", "network"),
        "/mnt/old/x": ("nfs", "network"),
        "/mnt/team share/a b": ("cifs", "network"),
        "/mnt/wsl": ("9p", "virtual"),
        "/home/jovyan/work/analysis": ("virtiofs", "virtual"),
        "/cephfs/p": ("ceph", "network"),
        "/lustre/p": ("lustre", "network"),
        "/gpfs/p": ("gpfs", "network"),
        "/beegfs/p": ("beegfs", "network"),
        "/afs/cell/u": ("afs", "network"),
        "/gluster/p": ("fuse.glusterfs", "virtual"),
        "/dbfs/p": ("fuse", "virtual"),
        "/tmp/tab\tand\nnewline/p": ("smb3", "network"),
        "/data/p": ("xfs", "local"),
        "/overlay/p": ("overlay", "local"),
        "/srv/p": ("ext4", "local"),
    }
    for path, (fs_type, kind) in kinds.items():
        found = _on(path)
        assert (found.fs_type, found.kind) == (fs_type, kind), path
        assert found.shared == (kind != "local")


def test_the_longest_mount_point_wins_and_the_last_of_equals() -> None:
    assert _on("/home2/x").mount_point == "/"  # a prefix of the name is not a parent folder
    assert _on("/home").mount_point == "/home"
    shm = _on("/dev/shm/x")
    assert (shm.source, shm.options[:2]) == ("shm", ("rw", "nosuid"))  # mounted on top


def test_options_keep_mount_and_super_options_and_name_unsafe_locks() -> None:
    home = _on("/home/me")
    assert "shared:12" not in home.options
    assert {"relatime", "vers=4.2", "local_lock=none"} <= set(home.options)
    assert home.unsafe_lock_option is None  # local_lock=none keeps locks on the server
    assert _on("/mnt/old").unsafe_lock_option == "nolock"
    assert _on("/mnt/team share").unsafe_lock_option == "nobrl"
    assert _on("/mnt/team share").source == "//files/team\\dept"
    posix = Filesystem("nfs4", "/h", options=("rw", "local_lock=posix"))
    assert posix.unsafe_lock_option == "local_lock=posix"


def test_macos_statfs_names_are_read_at_their_offsets() -> None:
    head = struct.calcsize("=Ii5Q2iIIII")  # f_bsize … f_fssubtype: 72 bytes
    assert head == 72

    def raw(fs_type: bytes, on: bytes, source: bytes) -> bytes:
        return bytes(head) + fs_type.ljust(16, b"\0") + on.ljust(1024, b"\0") + source + b"\0"

    smb = filesystem._bsd_names(raw(b"smbfs", b"/Volumes/team", b"//me@srv/team"), head)
    assert (smb.fs_type, smb.mount_point, smb.source, smb.kind) == (
        "smbfs",
        "/Volumes/team",
        "//me@srv/team",
        "network",
    )
    fuse = filesystem._bsd_names(raw(b"macfuse", b"/Volumes/gcs", b"gcs"), head)
    assert (fuse.fs_type, fuse.kind) == ("fuse.macfuse", "virtual")
    apfs = filesystem._bsd_names(raw(b"apfs", b"/", b"/dev/disk3s1"), head)
    assert not apfs.shared


def test_an_unreadable_table_and_statfs_count_as_local_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filesystem, "MOUNTINFO", tmp_path / "none")
    monkeypatch.setattr(filesystem, "statfs_magic", lambda _path: None)
    found = filesystem_of(tmp_path)
    assert (found.known, found.shared) == (False, False)
    assert "could not be read" in found.describe()
