import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Part = CallToolResult["content"][number];

/** A tool result as the text the model gets: text parts, structured content, placeholders for media. */
export function resultText(result: CallToolResult): string {
  const parts = (Array.isArray(result.content) ? result.content : []).map(partText);
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) {
    const json = JSON.stringify(structured);
    if (!parts.some((p) => p.trim() === json || safeParseEqual(p, json))) parts.push(json);
  }
  const text = parts.join("\n").trim();
  return text || "(the tool returned nothing)";
}

function partText(part: Part): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
      return `[image (${part.mimeType}, ${approxBytes(part.data)}): not shown to the model]`;
    case "audio":
      return `[audio (${part.mimeType}, ${approxBytes(part.data)}): not shown to the model]`;
    case "resource_link":
      return `[resource: ${part.name} ${part.uri}${part.description ? ` — ${part.description}` : ""}]`;
    case "resource": {
      const r = part.resource;
      return "text" in r && typeof r.text === "string" ? r.text : `[resource: ${r.uri} (${r.mimeType ?? "binary"})]`;
    }
    default:
      return `[${String((part as { type?: unknown }).type)} content]`;
  }
}

function approxBytes(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}

function safeParseEqual(text: string, json: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}
