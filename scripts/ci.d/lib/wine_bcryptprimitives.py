#!/usr/bin/env python3
"""Write bcryptprimitives.dll for Wine 8, which lacks it.

Go (1.24 and later) on Windows takes its random numbers from ProcessPrng in
bcryptprimitives.dll and stops at start-up without it ("bcryptprimitives.dll
not found"); Wine has the DLL from 9.x on. This one holds no code: a PE32+
DLL whose one export, ProcessPrng, is forwarded to advapi32's
SystemFunction036 (RtlGenRandom). The two agree on x64: a buffer and its
length in, non-zero out on success (RtlGenRandom reads the length as 32
bits; Go asks for far less at a time).

usage: wine_bcryptprimitives.py PATH
"""
import struct
import sys

SECTION_RVA, FILE_ALIGN, SECTION_RAW = 0x1000, 0x200, 0x200

def export_section():
    dll, fn, fwd = b"bcryptprimitives.dll\0", b"ProcessPrng\0", b"advapi32.SystemFunction036\0"
    off_dll = 40 + 4 + 4 + 2 + 2  # directory, functions, names, ordinals, padding
    off_fn = off_dll + len(dll)
    off_fwd = off_fn + len(fn)
    directory = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, SECTION_RVA + off_dll, 1, 1, 1,
                            SECTION_RVA + 40, SECTION_RVA + 44, SECTION_RVA + 48)
    # A function's address inside the export directory makes it a forwarder.
    tables = struct.pack("<IIHH", SECTION_RVA + off_fwd, SECTION_RVA + off_fn, 0, 0)
    data = directory + tables + dll + fn + fwd
    assert len(directory + tables) == off_dll
    return data

def dll():
    sec = export_section()
    coff = struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 240, 0x2022)  # x64; executable, large address aware, DLL
    opt = struct.pack("<HBBIIIIIQIIHHHHHHIIIIHHQQQQII",
                      0x20B, 14, 0, 0, FILE_ALIGN, 0, 0, 0,  # PE32+, no code, no entry point
                      0x180000000, 0x1000, FILE_ALIGN,
                      6, 0, 0, 0, 6, 0, 0,
                      0x2000, SECTION_RAW, 0, 3, 0x100,  # image and headers size, console, NX
                      0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    dirs = struct.pack("<II", SECTION_RVA, len(sec)) + b"\0" * 8 * 15  # the export directory
    section = struct.pack("<8sIIIIIIHHI", b".edata", len(sec), SECTION_RVA, FILE_ALIGN, SECTION_RAW,
                          0, 0, 0, 0, 0x40000040)  # initialized data, readable
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 64)
    headers = dos + b"PE\0\0" + coff + opt + dirs + section
    assert len(opt + dirs) == 240 and len(headers) <= SECTION_RAW
    return headers.ljust(SECTION_RAW, b"\0") + sec.ljust(FILE_ALIGN, b"\0")

if __name__ == "__main__":
    with open(sys.argv[1], "wb") as f:
        f.write(dll())
