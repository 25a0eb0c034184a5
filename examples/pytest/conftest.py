import sys
from pathlib import Path

# The example's modules (agent.py, records_client.py) import each other by name.
sys.path.insert(0, str(Path(__file__).resolve().parent))
