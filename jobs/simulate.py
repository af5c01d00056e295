"""spark-submit entry point: the same options as `baccarat simulate`.

    spark-submit --master spark://HOST:7077 --driver-java-options -Dlog4j2.configurationFile=conf/spark/log4j2.properties \
        jobs/simulate.py --shoes 1000000 --seed 7 --out s3://bucket/baccarat

    spark-submit ... jobs/simulate.py --rules chemin_de_fer --shoes 1000000 --seed 7 \
        --player-strategy chemin_de_fer_player_stands_at_5 --out s3://bucket/baccarat

(the log4j option keeps Spark's driver log to errors from the start; see docs/operations.md, "On a cluster".)
"""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main(["simulate", *sys.argv[1:]]))
