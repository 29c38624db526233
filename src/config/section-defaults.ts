// Written by `npm run schema` (scripts/export-schema.ts): what each section of hermes.yaml is when the file leaves
// it out (src/config/sections.ts). A test fails when it is stale.
export const SECTION_DEFAULTS: Record<string, unknown> = {
  "agent": {
    "max_steps": 8,
    "repeat_limit": 2,
    "failure_limit": 3,
    "confirm": [
      "shell",
      "write_file",
      "send_message"
    ],
    "confirm_timeout_s": 600,
    "shutdown_grace_s": 10,
    "max_run_tokens": 0
  },
  "connectors": {
    "cli": {
      "enabled": true,
      "socket": "./data/hermes.sock"
    },
    "telegram": {
      "enabled": false,
      "token": "",
      "allowed_users": [],
      "api_root": "https://api.telegram.org",
      "poll_timeout_s": 30,
      "stream_replies": true,
      "user_names": {}
    },
    "discord": {
      "enabled": false,
      "token": "",
      "allowed_users": [],
      "api_root": "https://discord.com/api",
      "stream_replies": true,
      "user_names": {}
    },
    "cron": {
      "enabled": true,
      "jobs": [],
      "retries": 2,
      "retry_delay_s": 30
    },
    "http": {
      "enabled": false,
      "listen": "127.0.0.1:8787",
      "token": "",
      "hooks": [],
      "openai": {
        "enabled": false,
        "approvals_to": ""
      },
      "trusted_proxies": []
    },
    "email": {
      "enabled": false,
      "address": "",
      "imap": {
        "host": "",
        "port": 993,
        "secure": true,
        "user": "",
        "pass": "",
        "mailbox": "INBOX",
        "poll_seconds": 60
      },
      "smtp": {
        "host": "",
        "port": 465,
        "secure": true,
        "user": "",
        "pass": ""
      },
      "allowed_senders": [],
      "trust": "authentication-results",
      "authserv_id": ""
    },
    "plugins": []
  },
  "context": {
    "summaries": true,
    "compact_every": 20,
    "compact_timeout_s": 120
  },
  "log": {
    "level": "info",
    "format": "auto"
  },
  "mcp": {
    "servers": {}
  },
  "model": {
    "provider": "ollama",
    "base_url": "http://127.0.0.1:11434",
    "name": "hermes3:8b",
    "api_key": "",
    "context_tokens": 16384,
    "max_output_tokens": 1024,
    "temperature": 0.2,
    "timeout_s": 300,
    "tool_call_format": "auto",
    "keep_alive": "30m",
    "concurrency": 1,
    "retries": 4,
    "retry_base_ms": 500,
    "stream": true,
    "first_byte_timeout_s": 60,
    "daily_tokens": 0,
    "retry_primary_after_s": 300,
    "fallbacks": [],
    "vision": "auto",
    "vision_model": "",
    "max_image_px": 1568
  },
  "skills": {
    "dirs": [
      "./data/skills"
    ],
    "index_max_tokens": 300
  },
  "storage": {
    "path": "./data/hermes.db",
    "busy_timeout_ms": 5000
  },
  "tools": {
    "enabled": [
      "clock",
      "notes",
      "remind",
      "read_file",
      "list_files",
      "write_file",
      "http_get",
      "weather",
      "recall",
      "skill"
    ],
    "clock": {},
    "notes": {},
    "memory": {
      "max_facts": 50
    },
    "remind": {},
    "files": {
      "root": "./data/files",
      "max_bytes": 1000000
    },
    "shell": {
      "max_output_chars": 4000
    },
    "http_get": {
      "allow": [],
      "max_bytes": 2000000
    },
    "send_message": {},
    "weather": {
      "base_url": "https://api.open-meteo.com",
      "geocoding_url": "https://geocoding-api.open-meteo.com"
    },
    "calendar": {
      "sources": []
    },
    "feeds": {
      "urls": []
    },
    "web_search": {}
  }
};
