import type { ToolName } from "../src/config/schema.js";
import { z } from "../src/config/zod.js";
import { ToolError } from "../src/errors.js";
import { defineTool } from "../src/tools/define.js";
import type { ToolDeps } from "../src/tools/types.js";

/** The network code (and ipaddr.js), loaded by the first call: a start does not pay for it. */
const net = () => import("./net.js");

const CODES: Record<number, string> = {
  0: "clear",
  1: "mostly clear",
  2: "partly cloudy",
  3: "overcast",
  45: "fog",
  48: "rime fog",
  51: "light drizzle",
  53: "drizzle",
  55: "heavy drizzle",
  56: "freezing drizzle",
  57: "freezing drizzle",
  61: "light rain",
  63: "rain",
  65: "heavy rain",
  66: "freezing rain",
  67: "freezing rain",
  71: "light snow",
  73: "snow",
  75: "heavy snow",
  77: "snow grains",
  80: "light showers",
  81: "showers",
  82: "violent showers",
  85: "snow showers",
  86: "heavy snow showers",
  95: "thunderstorm",
  96: "thunderstorm with hail",
  99: "thunderstorm with hail",
};

interface Forecast {
  current?: { temperature_2m?: number; weather_code?: number; wind_speed_10m?: number };
  daily?: {
    time: string[];
    weather_code: number[];
    temperature_2m_max: number[];
    temperature_2m_min: number[];
    precipitation_probability_max?: (number | null)[];
  };
}

/** Open-Meteo forecast for a place name or coordinates: now, today, tomorrow and the next days, compactly. */
export function createTool(_name: ToolName, deps: ToolDeps) {
  const s = deps.config.tools.weather;
  const timeoutMs = (s.timeout_s ?? 15) * 1000;
  return defineTool({
    name: "weather",
    description:
      'Weather now and for the next days at a place (default: the owner\'s home). Example: {} or {"place": "Hamburg", "days": 3}.',
    input: z.strictObject({
      place: z.string().min(1).max(100).optional(),
      latitude: z.number().min(-90).max(90).optional(),
      longitude: z.number().min(-180).max(180).optional(),
      days: z.int().min(1).max(7).optional(),
    }),
    readOnly: true,
    run: async (args, ctx) => {
      const allow = deps.config.tools.http_get.allow;
      const where = await locate(args, s, ctx.signal, timeoutMs, allow);
      const params = new URLSearchParams({
        latitude: String(where.latitude),
        longitude: String(where.longitude),
        current: "temperature_2m,weather_code,wind_speed_10m",
        daily: "weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max",
        timezone: deps.config.timezone,
        forecast_days: String(args.days ?? 3),
      });
      const body = await (await net()).fetchConfigured(`${s.base_url.replace(/\/+$/, "")}/v1/forecast?${params}`, {
        signal: ctx.signal,
        timeoutMs,
        allow,
      });
      return formatForecast(where.name, JSON.parse(body) as Forecast);
    },
  });
}

async function locate(
  args: { place?: string; latitude?: number; longitude?: number },
  s: ToolDeps["config"]["tools"]["weather"],
  signal: AbortSignal,
  timeoutMs: number,
  allow: string[],
): Promise<{ name: string; latitude: number; longitude: number }> {
  if (args.latitude !== undefined && args.longitude !== undefined) return { name: `${args.latitude}, ${args.longitude}`, ...args } as never;
  const place = args.place ?? s.location;
  if (!place) throw new ToolError('no place given and no tools.weather.location set; pass {"place": "<city>"}');
  const coords = place.match(/^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/);
  if (coords) return { name: place, latitude: Number(coords[1]), longitude: Number(coords[2]) };
  const url = `${s.geocoding_url.replace(/\/+$/, "")}/v1/search?${new URLSearchParams({ name: place, count: "1", language: "en", format: "json" })}`;
  const found = JSON.parse(await (await net()).fetchConfigured(url, { signal, timeoutMs, allow })) as {
    results?: { name: string; country?: string; latitude: number; longitude: number }[];
  };
  const hit = found.results?.[0];
  if (!hit) throw new ToolError(`no place called "${place}" was found`);
  return { name: hit.country ? `${hit.name}, ${hit.country}` : hit.name, latitude: hit.latitude, longitude: hit.longitude };
}

export function formatForecast(name: string, f: Forecast): string {
  const lines: string[] = [];
  const c = f.current;
  if (c?.temperature_2m !== undefined) {
    lines.push(
      `${name} now: ${Math.round(c.temperature_2m)}°C, ${describe(c.weather_code)}, wind ${Math.round(c.wind_speed_10m ?? 0)} km/h`,
    );
  }
  const d = f.daily;
  d?.time.forEach((day, i) => {
    const label =
      i === 0
        ? "Today"
        : i === 1
          ? "Tomorrow"
          : new Date(`${day}T12:00:00Z`).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
    const rain = d.precipitation_probability_max?.[i];
    const min = Math.round(d.temperature_2m_min[i] ?? 0);
    const max = Math.round(d.temperature_2m_max[i] ?? 0);
    lines.push(`${label}: ${min}–${max}°C, ${describe(d.weather_code[i])}${rain !== undefined && rain !== null ? `, rain ${rain}%` : ""}`);
  });
  return lines.join("\n") || `No forecast for ${name}.`;
}

function describe(code: number | undefined): string {
  return code === undefined ? "unknown" : (CODES[code] ?? `weather code ${code}`);
}
