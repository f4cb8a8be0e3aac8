/** The panel's two languages; English is the default (see README, "The panel"). */
export type Locale = "en" | "pt-BR"

/**
 * The browser's preferred language among ours (RFC 9110 12.5.4 `Accept-Language`, q-values
 * honoured): any `pt` variant reads Portuguese, anything else English.
 */
export const localeFrom = (acceptLanguage: string | undefined): Locale => {
  const ranges = (acceptLanguage ?? "")
    .split(",")
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(";")
      const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)).find(Boolean)
      return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, index }
    })
    .filter((range) => range.tag !== "" && range.q > 0 && !Number.isNaN(range.q))
    .sort((a, b) => b.q - a.q || a.index - b.index)
  for (const range of ranges) {
    if (range.tag === "pt" || range.tag.startsWith("pt-")) return "pt-BR"
    if (range.tag === "en" || range.tag.startsWith("en-")) return "en"
  }
  return "en"
}

const PT: Readonly<Record<string, string>> = {
  "Panel": "Painel",
  "Sign in": "Entrar",
  "Sign in to the panel": "Entrar no painel",
  "Sign out": "Sair",
  "Email": "E-mail",
  "Password": "Senha",
  "Email or password is not right.": "E-mail ou senha incorretos.",
  "Your form expired; please try again.": "O formulário expirou; tente de novo.",
  "The form could not be read; please try again.": "Não foi possível ler o formulário; tente de novo.",
  "You belong to no company.": "Você não pertence a nenhuma empresa.",
  "Skip to content": "Pular para o conteúdo",
  "Company": "Empresa",
  "Switch": "Trocar",
  "Overview": "Visão geral",
  "API keys": "Chaves de API",
  "Events": "Eventos",
  "Event feed": "Feed de eventos",
  "Deleted records": "Registros excluídos",
  "Resources": "Recursos",
  "Webhooks": "Webhooks",
  "Records": "Registros",
  "Recent events": "Eventos recentes",
  "Failing webhook endpoints": "Endpoints de webhook com falha",
  "Keys about to expire": "Chaves prestes a expirar",
  "None.": "Nenhum.",
  "No records.": "Nenhum registro.",
  "Name": "Nome",
  "Description": "Descrição",
  "Status": "Situação",
  "active": "ativa",
  "expired": "expirada",
  "revoked": "revogada",
  "Last used": "Último uso",
  "Never": "Nunca",
  "Expires": "Expira",
  "Created": "Criada",
  "Prefix": "Prefixo",
  "Permissions": "Permissões",
  "Create key": "Criar chave",
  "Create": "Criar",
  "Save": "Salvar",
  "Cancel": "Cancelar",
  "Delete": "Excluir",
  "Edit": "Editar",
  "Restore": "Restaurar",
  "Revoke": "Revogar",
  "Revoke key": "Revogar chave",
  "Expiry date": "Data de expiração",
  "Optional. The key stops working at 00:00 UTC of this date.": "Opcional. A chave deixa de funcionar às 00:00 UTC desta data.",
  "Resource": "Recurso",
  "read": "ler",
  "create": "criar",
  "update": "alterar",
  "delete": "excluir",
  "Every resource": "Todos os recursos",
  "Copy": "Copiar",
  "Copied": "Copiado",
  "Your new key": "Sua nova chave",
  "Copy this token now: it is shown only once.": "Copie este token agora: ele só é mostrado uma vez.",
  "Back to keys": "Voltar às chaves",
  "Revoke this key? Integrations using it stop working at once.": "Revogar esta chave? As integrações que a usam param na hora.",
  "The key was revoked.": "A chave foi revogada.",
  "The record was restored.": "O registro foi restaurado.",
  "The record was saved.": "O registro foi salvo.",
  "The record was deleted.": "O registro foi excluído.",
  "Admins only": "Somente administradores",
  "This screen is for the company's admins.": "Esta tela é para os administradores da empresa.",
  "Not found": "Não encontrado",
  "Something is wrong with the form: see the fields marked below.": "Há algo errado no formulário: veja os campos marcados abaixo.",
  "is required": "é obrigatório",
  "choose at least one permission": "escolha pelo menos uma permissão",
  "must be a future date (YYYY-MM-DD)": "deve ser uma data futura (AAAA-MM-DD)",
  "Type": "Tipo",
  "Record": "Registro",
  "When": "Quando",
  "Action": "Ação",
  "Filter": "Filtrar",
  "Any": "Qualquer",
  "Next page": "Próxima página",
  "Previous page": "Página anterior",
  "Deleted": "Excluído",
  "Search": "Buscar",
  "Actions": "Ações",
  "Delete this record?": "Excluir este registro?",
  "Run": "Executar",
  "New record": "Novo registro",
  "Details": "Detalhes",
  "Open": "Abrir",
  "Request refused": "Pedido recusado",
  "The form did not come from this page (CSRF check failed).": "O formulário não veio desta página (verificação CSRF falhou).",
  "Signed in as": "Conectado como",
  "Main": "Principal",
  "in": "em",
  "Endpoints": "Endpoints",
  "failures": "falhas",
  "JSON": "JSON",
  "Members": "Membros",
  "Role": "Papel",
  "admin": "administrador",
  "member": "membro",
  "Invite a member": "Convidar um membro",
  "Invite": "Convidar",
  "Remove": "Remover",
  "Remove this member? They stop acting in the company at once.": "Remover este membro? Ele deixa de agir na empresa na hora.",
  "Admins can do everything; members only what the permissions below allow.": "Administradores podem tudo; membros só o que as permissões abaixo permitem.",
  "must be an email address": "deve ser um endereço de e-mail",
  "is already a member": "já é membro",
  "the last admin cannot be demoted or removed": "o último administrador não pode ser rebaixado nem removido",
  "must be a whole number": "deve ser um número inteiro",
  "must be a number": "deve ser um número",
  "must be JSON": "deve ser JSON",
  "One per line.": "Um por linha.",
  "New key": "Nova chave",
  "Authorized apps": "Apps autorizados",
  "OAuth clients": "Clientes OAuth",
  "New OAuth client": "Novo cliente OAuth",
  "Application": "Aplicativo",
  "User": "Usuário",
  "Back": "Voltar",
  "Rotate secret": "Trocar segredo",
  "every company of the user": "todas as empresas do usuário",
  "Applications people of this company allowed to act for them.": "Aplicativos que pessoas desta empresa autorizaram a agir por elas.",
  "Revoke this client? Every token issued to it stops working at once.": "Revogar este cliente? Todos os tokens emitidos para ele param na hora.",
  "Revoke this authorization? The application stops acting for this person at once.": "Revogar esta autorização? O aplicativo deixa de agir por esta pessoa na hora.",
  "Times are shown in your time zone.": "Os horários são mostrados no seu fuso horário."
}

/** The translator of a locale: English text is the key, so a missing translation shows English. */
export const translator = (locale: Locale) => (text: string): string => (locale === "pt-BR" ? PT[text] ?? text : text)
export type Translate = ReturnType<typeof translator>
