import { describe, expect, it } from "vitest";
import { maskSecrets, parseConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/errors.js";

const parse = (text: string, env: NodeJS.ProcessEnv = {}) => parseConfig(text, "/etc/hermes/hermes.yaml", env).config;

describe("the speech and vision keys", () => {
  it("leaves speech off by default, and vision on auto with the 1568 px limit", () => {
    const config = parse("");
    expect(config.speech).toBeUndefined();
    expect(config.model).toMatchObject({ vision: "auto", vision_model: "", max_image_px: 1568 });
  });

  it("takes the documented speech block, with its key from the environment and masked when printed", () => {
    const text = [
      "speech:",
      "  base_url: http://127.0.0.1:8000/v1",
      "  model: Systran/faster-whisper-small",
      "  api_key: ${SPEECH_API_KEY:-}",
      '  language: ""',
      "  max_seconds: 600",
      "model:",
      "  vision: true",
      "  vision_model: qwen2.5vl:7b",
    ].join("\n");
    const config = parse(text, { SPEECH_API_KEY: "sk-speech-secret" });
    expect(config.speech).toMatchObject({ base_url: "http://127.0.0.1:8000/v1", api_key: "sk-speech-secret", max_seconds: 600 });
    expect(maskSecrets(config).speech?.api_key).toBe("********");
    expect(config.model).toMatchObject({ vision: true, vision_model: "qwen2.5vl:7b" });
  });

  it("names the key and what was expected for a wrong value", () => {
    for (const [text, expected] of [
      ["model:\n  vision: maybe\n", /2:11: model\.vision: expected auto, true or false/],
      ["speech:\n  model: x\n", /speech\.base_url/],
      ["speech:\n  base_url: http://x/v1\n  max_secs: 3\n", /speech\.max_secs: unknown key/],
    ] as const) {
      expect(() => parse(text)).toThrow(ConfigError);
      expect(() => parse(text)).toThrow(expected);
    }
  });
});
