/**
 * The fw barrel (not published): re-exports the four members so that examples and tests inside
 * this repository can import everything from one place. Users import the members themselves.
 *
 * @module
 */

export * as runtime from "@fw/runtime";
export * as application from "@fw/application";
export * as events from "@fw/events";
export * as dashboard from "@fw/dashboard";
