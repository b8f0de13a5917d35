// The one path every call takes, whatever the transport: authenticate, run the service
// implementation, normalise errors. Connect routes, the grpc-js server and the REST gateway
// are thin adapters in front of it.
import { create, isMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import {
  Code,
  createHandlerContext,
  type ConnectRouter,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { apiError, toConnectError } from "../errors.js";
import type { Authenticator } from "./auth.js";

export interface ServiceBinding {
  service: DescService;
  impl: object;
}

/** Pairs a service with its (possibly partial) implementation, type-checked against each other. */
export function bindService<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): ServiceBinding {
  return { service, impl };
}

/** What a non-Connect transport knows about an incoming call. */
export interface CallInfo {
  protocolName: string;
  requestMethod: string;
  url: string;
  headers: Headers;
  signal?: AbortSignal;
}

type UnaryFn = (input: Message, ctx: HandlerContext) => Promise<unknown> | unknown;

export class CallPipeline {
  readonly services: readonly DescService[];
  private readonly handlers = new Map<DescMethod, UnaryFn>();

  constructor(
    bindings: readonly ServiceBinding[],
    private readonly authenticate: Authenticator,
    private readonly onInternalError: (err: unknown) => void,
  ) {
    this.services = bindings.map((b) => b.service);
    for (const { service, impl } of bindings) {
      for (const method of service.methods) {
        const fn = (impl as Record<string, UnaryFn | undefined>)[method.localName];
        if (method.methodKind === "unary" && fn) this.handlers.set(method, fn.bind(impl));
      }
    }
  }

  async invoke<O extends Message>(method: DescMethod, input: Message, ctx: HandlerContext): Promise<O> {
    try {
      this.authenticate(ctx.requestHeader);
      const fn = this.handlers.get(method);
      if (!fn) throw apiError(Code.Unimplemented, `${method.parent.typeName}.${method.name} is not implemented yet`);
      const output = await fn(input, ctx);
      return (isMessage(output, method.output) ? output : create(method.output, output as never)) as O;
    } catch (err) {
      throw toConnectError(err, this.onInternalError);
    }
  }

  /** Invokes a method for a transport that does not build its own HandlerContext. */
  call<O extends Message>(method: DescMethod, input: Message, info: CallInfo): Promise<O> {
    const ctx = createHandlerContext({
      service: method.parent,
      method,
      protocolName: info.protocolName,
      requestMethod: info.requestMethod,
      url: info.url,
      requestHeader: info.headers,
      requestSignal: info.signal,
    });
    return this.invoke<O>(method, input, ctx);
  }

  /** Registers every service on a Connect router (Connect, gRPC-Web and gRPC protocols). */
  registerConnectRoutes(router: ConnectRouter): void {
    for (const service of this.services) {
      const impl: Record<string, UnaryFn> = {};
      for (const method of service.methods) {
        if (method.methodKind === "unary") impl[method.localName] = (input, ctx) => this.invoke(method, input, ctx);
      }
      router.service(service, impl as never);
    }
  }
}
