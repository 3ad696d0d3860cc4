# wirebroker in a container: the same command as on a laptop, data in a volume.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY wirebroker ./wirebroker
COPY schemas ./schemas
RUN pip install --no-cache-dir ".[cluster]"  # kazoo: the brokers of docker-compose.yml join ZooKeeper
VOLUME /var/lib/wirebroker
EXPOSE 9092
ENTRYPOINT ["wirebroker"]
CMD ["--override", "listeners=PLAINTEXT://0.0.0.0:9092", "--override", "advertised.listeners=PLAINTEXT://localhost:9092", "--override", "log.dirs=/var/lib/wirebroker"]
