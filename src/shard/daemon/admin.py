"""The daemon's own commands (PROTOCOL §10.1), sans-I/O: ``daemon.shutdown``, ``daemon.compare_env``,
``client.identify`` and ``host.list`` — about the daemon or the connection, no agent's."""

from __future__ import annotations

from collections.abc import Callable

from shard._provider_env import Holder
from shard.daemon import wire
from shard.daemon.effects import Client
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.results import ClientIdentifyResult, CompareEnvResult, HostListResult

DAEMON_COMMANDS = (cmd.DaemonShutdown, cmd.DaemonCompareEnv, cmd.ClientIdentify, cmd.HostList)
DaemonCommand = cmd.DaemonShutdown | cmd.DaemonCompareEnv | cmd.ClientIdentify | cmd.HostList


class DaemonCommands:
    def __init__(
        self,
        send: Callable[[Client, bytes], None],
        shutdown: Callable[[bool], None],
        provider_env: Callable[[], Holder],
        hosts: Callable[[], list[str]] = list,
    ) -> None:
        self.send = send
        self.hosts = hosts  # the [[hosts]] names as config.toml says now
        self.shutdown = shutdown  # force
        self.provider_env = provider_env  # the shell sets the daemon's own after the broker is made

    def handle(self, client: Client, command: DaemonCommand) -> None:
        if isinstance(command, cmd.HostList):
            self.send(client, wire.reply(command, HostListResult(hosts=self.hosts())))
        elif isinstance(command, cmd.ClientIdentify):
            client.label = command.name
            result = ClientIdentifyResult(client_id=client.source, label=client.label)
            self.send(client, wire.reply(command, result))
        elif isinstance(command, cmd.DaemonShutdown):
            self.send(client, wire.reply(command))
            self.shutdown(bool(command.force))
        else:
            if client.transport != "unix":  # asked by shard run; nothing a browser needs to know
                raise ShardError(ErrorCode.INVALID_REQUEST, "daemon.compare_env: on the unix socket only")
            differ = self.provider_env().differing(command.nonce, command.variables)
            self.send(client, wire.reply(command, CompareEnvResult(differ=differ)))
