"""spark-submit entry point: the same options as `baccarat simulate`.

    spark-submit --master spark://HOST:7077 jobs/simulate.py --shoes 1000000 --seed 7 --out s3://bucket/baccarat
"""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main(["simulate", *sys.argv[1:]]))
