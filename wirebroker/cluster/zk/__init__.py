"""Kafka's ZooKeeper-era controller building blocks, over the `kazoo` client (the `cluster` extra).

    paths.py               the znodes of Kafka's layout
    data.py                their JSON formats (broker registration, controller, topic assignment, partition state ...)
    fenced.py              writes in transactions that check the controller epoch (ControllerMovedError when stale)
    brokers.py             cluster id, broker registration (ephemeral, re-created after a session expiry)
    controller_election.py /controller and /controller_epoch: the election, and a candidate that watches for it
    topics.py              topic assignments, config overrides, deletion requests
    partition_state.py     leader/ISR/partition epoch znodes: pipelined reads, compare-and-set writes
    assignment.py          replica assignment, rack-aware (pure)
    leader_election.py     leader election rules (pure)
    controller_state.py    the controller's view and the leader/ISR changes it decides and writes per event
    isr_change.py          a leader's ISR changes (AlterPartition), checked and written
    reassignment.py        partition reassignments (KIP-455): adding replicas, catching up, removing
    controller_requests.py LeaderAndIsr, UpdateMetadata and StopReplica built from the controller's view
    controller_channel.py  the controller's queue and sender thread per broker
    controller.py          the controller's event loop (KafkaController): watches, elections, requests
    admin.py               topic administration through ZooKeeper (any broker) and config change notifications
    change_notifications.py  sequential change notifications: writing one, and every broker's listener
    scram_credentials.py   SCRAM credentials under /config/users
    acls.py                ACL bindings under /kafka-acl and /kafka-acl-extended (AclAuthorizer's layout)
    topic_metadata.py      a broker's topics in ZooKeeper mode, and producer-id blocks

The pure modules (data, assignment, leader_election) do not need kazoo.
"""
