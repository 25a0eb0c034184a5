raise RuntimeError("top-level failure in broken.py")
