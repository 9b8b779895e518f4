/**
 * `telemetry()`: metrics and traces through OpenTelemetry. The plugin lives in
 * `telemetry/telemetry.ts`; this file keeps the import path of the member's root.
 *
 * @module
 */

export {
  telemetry,
  type TelemetryMeter,
  type TelemetryMeterProvider,
  type TelemetryOptions,
  type TelemetryTracerProvider,
} from "./telemetry/telemetry.ts";
