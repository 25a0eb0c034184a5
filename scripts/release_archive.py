"""release_archive.py BASE FILE...: BASE.tar.gz (BASE.zip when the first FILE ends in .exe) holding
FILE... at its top level, byte for byte the same on every run: sorted entries, owner 0, mode 0755
for the binary (the first FILE) and 0644 for the rest, every time SOURCE_DATE_EPOCH."""

import gzip
import io
import os
import sys
import tarfile
import time
import zipfile

base, files = sys.argv[1], sys.argv[2:]
epoch = int(os.environ["SOURCE_DATE_EPOCH"])
members = [(os.path.basename(f), open(f, "rb").read(), 0o755 if i == 0 else 0o644) for i, f in enumerate(files)]
members.sort()
if files[0].endswith(".exe"):
    date = time.gmtime(max(epoch, 315532800))[:6]  # zip times start in 1980
    with zipfile.ZipFile(base + ".zip", "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name, date)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
else:
    with open(base + ".tar.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=epoch, filename="") as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, data, mode in members:
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), mode, epoch
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))
