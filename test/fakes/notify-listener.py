# A fake systemd NOTIFY_SOCKET: binds a unix datagram socket and prints every message as a JSON line.
import json
import socket
import sys

sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(sys.argv[1])
print(json.dumps("LISTENING"), flush=True)
while True:
    data = sock.recv(65536)
    print(json.dumps(data.decode("utf-8", "replace")), flush=True)
